//! A real browser for the web UI's tests and figures: headless Chromium
//! (Debian `chromium`) driven over WebDriver by `chromedriver` (Debian
//! `chromium-driver`) through `fantoccini`. Both are in
//! `scripts/packages.sh`; a machine without them fails the test with the
//! install command rather than skipping it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// Where `scripts/packages.sh` installs axe-core's browser build.
pub const AXE_DEFAULT: &str = "/usr/local/lib/gslb-npm/node_modules/axe-core/axe.min.js";

/// How long a browser wait polls before it fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// A headless Chromium session; the driver is killed on drop.
pub struct Browser {
    /// The WebDriver session.
    pub client: Client,
    driver: Child,
    profile: PathBuf,
    shots: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Where screenshots go: `GSLB_UI_SHOTS`, else `target/ui-screenshots`
/// of the workspace.
pub fn shots_dir() -> PathBuf {
    std::env::var_os("GSLB_UI_SHOTS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ui-screenshots"),
        PathBuf::from,
    )
}

impl Browser {
    /// Start chromedriver on a free loopback port and open a headless
    /// Chromium session (a fresh profile, a 1400×1000 window). The UI's
    /// certificate comes from the test's development CA, which this
    /// profile does not trust: certificate errors are ignored, for
    /// loopback only.
    pub async fn start() -> Browser {
        Browser::start_with(&[]).await
    }

    /// [`Browser::start`] with more Chromium switches (`--force-dark-mode`
    /// for a page as a browser set to dark sees it).
    pub async fn start_with(extra: &[&str]) -> Browser {
        for tool in ["chromium", "chromedriver"] {
            assert!(
                Command::new("which")
                    .arg(tool)
                    .stdout(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success()),
                "{tool} is missing: the browser tests need Debian's chromium and chromium-driver \
                 (as root: source scripts/packages.sh && gslb_install_packages)"
            );
        }
        let port = free_port();
        let driver = Command::new("chromedriver")
            .args([format!("--port={port}"), "--allowed-ips=127.0.0.1".into()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let profile =
            std::env::temp_dir().join(format!("gslb-chromium-{}-{port}", std::process::id()));
        let shots = shots_dir();
        std::fs::create_dir_all(&shots).expect("screenshot directory");
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--ignore-certificate-errors",
            "--window-size=1400,1000",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--metrics-recording-only",
        ]
        .map(str::to_owned)
        .to_vec();
        args.push(format!("--user-data-dir={}", profile.display()));
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": "/usr/bin/chromium", "args": args }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + WAIT;
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) => {
                    assert!(
                        Instant::now() < deadline,
                        "chromedriver did not start a session: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        Browser {
            client,
            driver,
            profile,
            shots,
        }
    }

    /// Save a screenshot as `name.png` in [`shots_dir`]; its path.
    pub async fn shot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("screenshot");
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }

    /// Run `script` in the page (its `return` value as JSON).
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// axe-core's violations on the page as it is (WCAG 2.x A and AA rules
    /// and best practices), each as `rule: impact: the first nodes`; empty
    /// when there is none. axe-core comes from npm (`scripts/packages.sh`):
    /// `GSLB_AXE`, else [`AXE_DEFAULT`]; missing, the test fails with the
    /// install command.
    pub async fn axe(&self) -> Vec<String> {
        let path =
            std::env::var_os("GSLB_AXE").map_or_else(|| PathBuf::from(AXE_DEFAULT), PathBuf::from);
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "axe-core is missing at {} ({e}): as root, source scripts/packages.sh && gslb_install_packages",
                path.display()
            )
        });
        // Defined in the page by the driver's script (the page's CSP allows
        // no script element from elsewhere), then run.
        self.client
            .execute(&format!("{source}\n;return null;"), vec![])
            .await
            .expect("load axe-core");
        let result = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {resultTypes: ['violations']})
                   .then(r => done(r.violations.map(v => v.id + ': ' + v.impact + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))))
                   .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("run axe-core");
        serde_json::from_value(result).unwrap_or_default()
    }

    /// Run `script` until it returns something truthy; that value. Polls
    /// every 20 ms, fails naming `what` after [`WAIT`].
    pub async fn wait_js(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.js(script, vec![]).await;
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!("") && v != json!(0);
            if truthy {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The text of the first element matching `css`, or None.
    pub async fn text(&self, css: &str) -> Option<String> {
        let el = self.client.find(Locator::Css(css)).await.ok()?;
        el.text().await.ok()
    }

    /// Click the first element matching `css`. A live page may redraw
    /// between finding and clicking: a stale element is found again.
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = self.client.find(Locator::Css(css)).await;
            let result = match found {
                Ok(el) => el.click().await,
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => return,
                Err(e) if Instant::now() < deadline && e.to_string().contains("stale element") => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("click {css}: {e}"),
            }
        }
    }

    /// Send `keys` to the first element matching `css`, or to the focused
    /// element when `css` is `None`; a stale element (the live page
    /// redrew it) is found again, as [`Browser::click`] does.
    pub async fn press(&self, css: Option<&str>, keys: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = match css {
                Some(css) => self.client.find(Locator::Css(css)).await,
                None => self.client.active_element().await,
            };
            let result = match found {
                Ok(el) => el.send_keys(keys).await,
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => return,
                Err(e) if Instant::now() < deadline && e.to_string().contains("stale element") => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("keys to {css:?}: {e}"),
            }
        }
    }

    /// Replace the value of the input matching `css` with `value`, typed.
    pub async fn fill(&self, css: &str, value: &str) {
        let el = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"));
        el.clear()
            .await
            .unwrap_or_else(|e| panic!("clear {css}: {e}"));
        el.send_keys(value)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Sign in to the UI at `base` with `token` through its sign-in page,
    /// and wait for the topology with its live stream open.
    pub async fn sign_in(&self, base: &str, token: &str) {
        self.client
            .goto(&format!("{base}/ui/"))
            .await
            .expect("open the UI");
        self.wait_js(
            "the sign-in page",
            "return location.pathname === '/ui/login' && !!document.querySelector('#token');",
        )
        .await;
        self.fill("#token", token).await;
        self.click("#signin-form button[type=submit]").await;
        self.wait_js(
            "the topology after sign-in",
            "return location.pathname === '/ui/' && !!document.querySelector('#topology');",
        )
        .await;
        self.wait_js(
            "the live stream",
            "return document.querySelector('#live').textContent === 'live';",
        )
        .await;
        let url = self
            .client
            .current_url()
            .await
            .expect("the URL")
            .to_string();
        assert!(!url.contains(token), "the token is in the URL {url}");
    }

    /// End the session and the driver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Drop for Browser {
    /// A failed test's browser goes too: the driver, and any Chromium
    /// process of this session's profile it left behind.
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = Command::new("pkill")
            .args([
                "-f",
                "--",
                &format!("--user-data-dir={}", self.profile.display()),
            ])
            .status();
    }
}
