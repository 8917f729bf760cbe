// gslb web UI: live member states over server-sent events, the member
// slide-over, the object editor, declarative apply and sign-in. No
// third-party code; every value from the server is set as text, never as
// HTML (the only HTML taken is the server's own rendered fragments).
"use strict";

(function () {
  const body = document.body;
  const csrf = body.dataset.csrf || "";
  const canWrite = body.dataset.canWrite === "true";
  const canOperate = body.dataset.canOperate === "true";
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  // One call to the UI's API: JSON (or text) in, {ok, status, data} out.
  async function api(method, path, payload, type, extra) {
    const headers = Object.assign({ "x-csrf-token": csrf }, extra || {});
    let sent;
    if (payload !== undefined) {
      headers["content-type"] = type || "application/json";
      sent = type ? payload : JSON.stringify(payload);
    }
    const r = await fetch(path, { method, headers, body: sent, credentials: "same-origin" });
    let data = null;
    const text = await r.text();
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: { message: text } }; }
    return { ok: r.ok, status: r.status, data };
  }

  function errorOf(result) {
    const e = (result.data && result.data.error) || {};
    return { field: e.field || "", message: e.message || ("HTTP " + result.status), currentRevision: e.currentRevision };
  }

  // Read tokens see everything and change nothing: the server refuses
  // changes anyway; the controls say so up front.
  function lockForReaders(root) {
    if (body.dataset.admin !== "true") $$(".admin", root).forEach((b) => { b.disabled = true; b.title = "needs an admin token"; });
    if (!canOperate) $$(".operates", root).forEach((b) => { b.disabled = true; b.title = "read token: incident controls need an operate token or stronger"; });
    if (canWrite) return;
    $$(".writes", root).forEach((b) => { b.disabled = true; b.title = "read token: changes are disabled"; });
    $$("#member-form input, #object-json, #apply-text, #apply-prune", root).forEach((i) => { i.disabled = true; });
  }

  // Dialogs: focus moves in on open and back on close; Escape closes.
  // Each dialog remembers what opened it (a confirmation opens over a
  // panel).
  const openers = new WeakMap();
  function openDialog(dialog, focus) {
    openers.set(dialog, document.activeElement);
    dialog.hidden = false;
    (focus || $("input, textarea, button", dialog)).focus();
  }
  function closeDialog(dialog) {
    dialog.hidden = true;
    const opener = openers.get(dialog);
    if (opener && document.contains(opener) && opener.offsetParent !== null) opener.focus();
    dialog.dispatchEvent(new Event("closed"));
  }
  // Escape closes an open dialog; Tab and Shift+Tab stay inside it.
  document.addEventListener("keydown", (ev) => {
    const open = $$("div[role=dialog], div[role=alertdialog]").filter((d) => !d.hidden);
    if (!open.length) return;
    if (ev.key === "Escape") { closeDialog(open[open.length - 1]); return; }
    if (ev.key !== "Tab") return;
    // The topmost: a confirmation comes after the panel it confirms for.
    const focusable = $$("a[href], input, textarea, select, button", open[open.length - 1]).filter((e) => !e.disabled && e.offsetParent !== null);
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (ev.shiftKey && document.activeElement === first) { last.focus(); ev.preventDefault(); }
    else if (!ev.shiftKey && document.activeElement === last) { first.focus(); ev.preventDefault(); }
  });

  // The confirmation every incident control asks first: it names what it
  // acts on; `act` returns an error message, or nothing when done.
  const confirmBox = $("#confirm");
  function confirmThen(title, text, yes, act) {
    $("#confirm-title").textContent = title;
    $("#confirm-text").textContent = text;
    $("#confirm-error").textContent = "";
    $("#confirm-yes").textContent = yes;
    $("#confirm-yes").onclick = async () => {
      const error = await act();
      if (error) { $("#confirm-error").textContent = error; return; }
      closeDialog(confirmBox);
    };
    openDialog(confirmBox, $("#confirm-no"));
  }
  if (confirmBox) $("#confirm-no").addEventListener("click", () => closeDialog(confirmBox));

  const signOut = $("#sign-out");
  if (signOut) {
    signOut.addEventListener("click", async () => {
      const r = await api("DELETE", "/ui/session");
      // Gone already (401) is signed out too; anything else is said, not
      // hidden behind the sign-in page while the cookie still works.
      if (r.ok || r.status === 401) { location.assign("/ui/login"); return; }
      $("#sign-out-error").textContent = "Sign-out failed: " + errorOf(r).message;
    });
  }

  // Where sign-in goes: the page that sent here (`?next=`), if it is one
  // of the UI's own, else the topology.
  function nextPage() {
    const next = new URLSearchParams(location.search).get("next") || "";
    return /^\/ui\/[^\/\\]/.test(next) || next === "/ui/" ? next : "/ui/";
  }
  const signInHere = () => "/ui/login?next=" + encodeURIComponent(location.pathname + location.search);

  // ---- sign-in ----
  const signin = $("#signin-form");
  if (signin) {
    signin.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const r = await fetch("/ui/session", {
        method: "POST",
        headers: { "content-type": "application/json", "x-gslb-ui": "1" },
        body: JSON.stringify({ token: $("#token").value }),
        credentials: "same-origin",
      });
      if (r.ok) { location.assign(nextPage()); return; }
      let message = "HTTP " + r.status;
      try { message = (await r.json()).error.message; } catch (_) { /* keep the status */ }
      $("#signin-error").textContent = message;
    });
    return;
  }

  lockForReaders(document);

  // ---- times: each UTC time gets the local time and its age beside it,
  // the age kept current ----
  function localTimes(root) {
    $$("time[datetime]", root).forEach((t) => {
      const at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      let span = t.nextElementSibling;
      if (!span || !span.classList.contains("local")) {
        span = document.createElement("span");
        span.className = "local";
        t.after(span);
      }
      span.textContent = " (" + new Date(at).toLocaleString() + " local, " + ago(Date.now() - at) + ")";
    });
  }
  localTimes(document);
  setInterval(() => localTimes(document), 30000);

  // ---- screen readers: state changes read out together, at most every
  // few seconds, the first few by name and the rest counted ----
  const ANNOUNCE_MS = 2000;
  const ANNOUNCE_NAMED = 5;
  const heard = [];
  let announcing = null;
  function announce(text) {
    heard.push(text);
    if (announcing) return;
    announcing = setTimeout(() => {
      announcing = null;
      const named = heard.splice(0, ANNOUNCE_NAMED);
      const more = heard.splice(0).length;
      const box = $("#announce");
      if (box) box.textContent = named.join("; ") + (more ? "; and " + more + " more changes" : "") + ".";
    }, ANNOUNCE_MS);
  }

  // ---- live states ----
  // The latest state of every member and pool, and when each member's node
  // last changed in this page (performance.timeOrigin-based ms since the
  // epoch), which the browser tests read to measure transition → DOM.
  const members = new Map();
  const pools = new Map();
  // `seen`: the last few labels each node showed in this page, oldest
  // first (the browser tests check that a page never shows a state older
  // than itself).
  const shown = {};
  const seen = {};
  window.gslbLive = { shown, seen };

  // Member nodes by id (a pool used by two records is drawn twice),
  // indexed once per drawing rather than searched for per update.
  let nodes = new Map();
  function index() {
    nodes = new Map();
    $$("button.member").forEach((node) => {
      const id = Number(node.dataset.member);
      if (!nodes.has(id)) nodes.set(id, []);
      nodes.get(id).push(node);
    });
  }
  index();

  const STATES = ["healthy", "unhealthy", "warming", "disabled", "unknown"];
  function showMember(m) {
    const before = members.get(m.id);
    members.set(m.id, m);
    (nodes.get(m.id) || []).forEach((node) => {
      STATES.forEach((s) => node.classList.toggle(s, s === m.state));
      $("[data-label]", node).textContent = m.label;
      const gate = $("[data-gate]", node);
      if (gate) gate.textContent = m.gate || "";
      const score = $("[data-score]", node);
      if (score) score.textContent = m.score == null ? "" : "score " + (m.score / 100).toFixed(2);
      node.setAttribute("aria-label", $(".mname", node).textContent + ", " + m.label + (m.gate ? ", gate " + m.gate : ""));
    });
    const drawn = nodes.get(m.id);
    if (before && before.label !== m.label && drawn) announce($(".mname", drawn[0]).textContent + " is now " + m.label);
    shown[m.id] = { label: m.label, at: performance.timeOrigin + performance.now() };
    const labels = seen[m.id] || (seen[m.id] = []);
    if (labels[labels.length - 1] !== m.label) labels.push(m.label);
    if (labels.length > 8) labels.shift();
  }
  function badge(text, kind) {
    const span = document.createElement("span");
    span.className = "badge " + kind;
    span.textContent = text;
    return span;
  }
  function showPool(p) {
    pools.set(p.id, p);
    $$('[data-badges="' + p.id + '"]').forEach((node) => {
      const list = [p.eligible ? badge("eligible", "ok") : badge("not eligible", "bad")];
      if (p.protected) list.push(badge("protection active", "warn"));
      if (p.failOpen) list.push(badge("fail-open in force", "warn"));
      if (p.usingBackups) list.push(badge("using backups", "warn"));
      if (p.paused) list.push(badge("decisions paused", "warn"));
      const tally = document.createElement("span");
      tally.className = "tally";
      tally.textContent = ["healthy", "warming", "unhealthy", "disabled", "unknown"]
        .map((word, i) => [p.counts[i], word])
        .filter(([n]) => n > 0)
        .map(([n, word]) => n + " " + word)
        .join(" · ");
      list.push(tally);
      node.replaceChildren(...list.flatMap((b, i) => (i ? [" ", b] : [b])));
    });
  }

  // A short age, as the server writes it ("4.2 s ago").
  function ago(ms) {
    ms = Math.max(0, ms);
    if (ms < 1000) return ms + " ms ago";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s ago";
    if (ms < 3600000) return Math.floor(ms / 60000) + " min ago";
    return Math.floor(ms / 3600000) + " h ago";
  }

  // A plan or its outcome: `#{prefix}-result` shown with its heading and
  // one list item per line (as text).
  function showLines(prefix, heading, lines) {
    $("#" + prefix + "-result").hidden = false;
    $("#" + prefix + "-heading").textContent = heading;
    $("#" + prefix + "-lines").replaceChildren(...lines.map((l) => {
      const li = document.createElement("li");
      li.textContent = l;
      return li;
    }));
  }

  async function refetch(path, target) {
    const r = await fetch(path, { credentials: "same-origin" });
    if (!r.ok) return false;
    target.innerHTML = await r.text();
    localTimes(target);
    return true;
  }

  // The event stream. The browser reconnects by itself after a dropped
  // connection; a refused one (the session ended, or the aggregator is at
  // its stream limit) is closed for good, so it is tried again here, or
  // the page goes to sign-in.
  let downSince = null;
  function listen(handlers) {
    const live = $("#live");
    const source = new EventSource("/ui/events");
    source.addEventListener("open", () => {
      downSince = null;
      body.classList.remove("stream-down");
      if (live) live.textContent = "live";
    });
    source.addEventListener("error", async () => {
      // What the page shows is no longer live: grey it and say since when.
      if (downSince === null) downSince = new Date();
      body.classList.add("stream-down");
      if (live) live.textContent = "disconnected since " + downSince.toLocaleTimeString() + " (" + downSince.toISOString() + "); states shown may be old, reconnecting…";
      if (source.readyState !== EventSource.CLOSED) return;
      const r = await fetch("/ui/api/v1/decisions", { credentials: "same-origin" });
      if (r.status === 401) { location.assign(signInHere()); return; }
      setTimeout(() => listen(handlers), 5000);
    });
    Object.entries(handlers).forEach(([name, fn]) => {
      source.addEventListener(name, (ev) => fn(ev.data ? JSON.parse(ev.data) : null));
    });
    return source;
  }

  const topology = $("#topology");
  if (topology) {
    // The catalog generation the canvas was drawn from; a newer one (a
    // zone, record, pool, check or member added, changed or deleted) draws
    // it again, keeping which pools are open.
    const drawn = () => Number($(".canvas", topology).dataset.generation);
    let redrawing = false;
    // Only what changed: the manifest says each pool's version and the
    // canvas' shape; pools whose version moved are fetched one by one, and
    // the whole canvas only when its shape moved (a zone, record or pool
    // added, renamed or removed).
    async function patch() {
      const r = await fetch("/ui/topology/manifest", { credentials: "same-origin" });
      if (!r.ok) return false;
      const m = await r.json();
      const canvas = $(".canvas", topology);
      if (m.shape !== canvas.dataset.shape) return false;
      for (const [id, version] of Object.entries(m.pools)) {
        const shown = $$('details.pool[data-pool="' + id + '"]', topology);
        if (!shown.length || shown[0].dataset.version === version) continue;
        if (!await loadPool(id, true)) return false;
      }
      canvas.dataset.generation = String(m.generation);
      return true;
    }
    // One pool's node drawn again from the server, everywhere it is shown
    // (a pool used by two records is drawn twice). With `keepLazy`, a closed
    // pool of a large canvas keeps its member list unloaded.
    async function loadPool(id, keepLazy) {
      const f = await fetch("/ui/topology/pools/" + id, { credentials: "same-origin" });
      if (!f.ok) return false;
      const t = document.createElement("template");
      t.innerHTML = await f.text();
      const fresh = t.content.firstElementChild;
      $$('details.pool[data-pool="' + id + '"]', topology).forEach((old) => {
        const node = fresh.cloneNode(true);
        node.open = old.open;
        const list = $("ul.members", node);
        if (keepLazy && !old.open && $("ul.members[data-lazy]", old)) {
          list.replaceChildren();
          list.dataset.lazy = "";
          list.setAttribute("aria-busy", "true");
        }
        old.replaceWith(node);
      });
      return true;
    }
    // A large canvas draws a pool's members when it is opened.
    topology.addEventListener("toggle", async (ev) => {
      const pool = ev.target;
      if (!pool.matches || !pool.matches("details.pool") || !pool.open || !$("ul.members[data-lazy]", pool)) return;
      if (!await loadPool(pool.dataset.pool)) return;
      index();
      $$('details.pool[data-pool="' + pool.dataset.pool + '"] button.member', topology).forEach((n) => {
        const m = members.get(Number(n.dataset.member));
        if (m) showMember(m);
      });
      const p = pools.get(Number(pool.dataset.pool));
      if (p) showPool(p);
      lockForReaders(topology);
      topology.dispatchEvent(new Event("gslb:drawn"));
    }, true);
    async function redraw(generation) {
      if (redrawing || generation <= drawn()) return;
      redrawing = true;
      const open = new Set($$("details.pool", topology).filter((d) => d.open).map((d) => d.dataset.pool));
      const closed = new Set($$("details.pool", topology).filter((d) => !d.open).map((d) => d.dataset.pool));
      if (await patch() || await refetch("/ui/topology", topology)) {
        index();
        $$("details.pool", topology).forEach((d) => {
          if (open.has(d.dataset.pool)) d.open = true;
          if (closed.has(d.dataset.pool)) d.open = false;
        });
        members.forEach(showMember);
        pools.forEach(showPool);
        lockForReaders(topology);
        localTimes(topology);
        filter();
        topology.dispatchEvent(new Event("gslb:drawn"));
      }
      redrawing = false;
      if (generation > drawn()) redraw(generation);
    }
    // A state filter follows state changes, once per frame at most.
    let refiltering = false;
    function refilter() {
      if (refiltering || !stateFilter.value) return;
      // On a large canvas a state change may be in a pool not drawn: ask
      // the server again (at most once a second).
      if ($(".canvas", topology).dataset.lazy === "true" && found) found = { ...found, key: "" };
      refiltering = true;
      requestAnimationFrame(() => { refiltering = false; filter(); });
    }
    listen({
      snapshot: (s) => { s.members.forEach(showMember); s.pools.forEach(showPool); redraw(s.generation); refilter(); },
      changes: (c) => {
        c.members.forEach(showMember);
        c.pools.forEach(showPool);
        c.removedMembers.forEach((id) => members.delete(id));
        c.removedPools.forEach((id) => pools.delete(id));
        refilter();
      },
      catalog: (generation) => redraw(generation),
    });

    // Search and filters: show the members whose name or address holds
    // the text, in the state and region asked, and open the pools that
    // have one. What is asked lives in the address (`?q=`, `?state=`,
    // `?region=`, `?member=`): a link or a reload shows the same view.
    const search = $("#search");
    const stateFilter = $("#state-filter");
    const regionFilter = $("#region-filter");
    const PROBLEMS = ["unhealthy", "warming", "unknown"];
    const asked = new URLSearchParams(location.search);
    search.value = asked.get("q") || "";
    stateFilter.value = asked.get("state") || "";
    regionFilter.value = asked.get("region") || "";
    function remember(key, value) {
      const now = new URLSearchParams(location.search);
      if (value) now.set(key, value); else now.delete(key);
      const query = now.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
    }
    // A large canvas (member lists drawn on opening) asks the server which
    // pools match, draws those, then filters them here; at most once a
    // second, and again when live states move under a state filter.
    let found = null; // {key, pools: Set of pool ids, matched}
    let finding = null;
    let lastFind = 0;
    const criteria = () => JSON.stringify([search.value.trim().toLowerCase(), stateFilter.value, regionFilter.value]);
    function findSoon() {
      if (finding) return;
      finding = setTimeout(async () => {
        const key = criteria();
        const asked = new URLSearchParams({ q: search.value.trim(), state: stateFilter.value, region: regionFilter.value });
        lastFind = Date.now();
        const r = await fetch("/ui/topology/find?" + asked, { credentials: "same-origin" });
        if (r.ok) {
          const f = await r.json();
          for (const id of f.pools) {
            if ($('details.pool[data-pool="' + id + '"] ul.members[data-lazy]', topology)) await loadPool(id);
          }
          index();
          members.forEach(showMember);
          found = { key, pools: new Set(f.pools.map(String)), matched: f.matchedPools };
        }
        finding = null;
        filter();
      }, Math.max(200, 1000 - (Date.now() - lastFind)));
    }
    function filter() {
      const q = search.value.trim().toLowerCase();
      const state = stateFilter.value;
      const region = regionFilter.value;
      const narrowing = q || state || region;
      const large = $(".canvas", topology).dataset.lazy === "true";
      if (large && narrowing && (!found || found.key !== criteria())) findSoon();
      let hits = 0, total = 0;
      $$("details.pool", topology).forEach((pool) => {
        if (large && narrowing && !(found && found.key === criteria() && found.pools.has(pool.dataset.pool))) {
          pool.hidden = true;
          return;
        }
        let any = false;
        $$("button.member", pool).forEach((node) => {
          total += 1;
          const hit = (!q || node.dataset.name.includes(q) || node.dataset.address.includes(q))
            && (!state || (state === "problems" ? PROBLEMS.some((c) => node.classList.contains(c)) : node.classList.contains(state)))
            && (!region || node.dataset.region === (region === "-" ? "" : region));
          node.parentElement.hidden = !hit;
          if (hit) hits += 1;
          any = any || hit;
        });
        if (narrowing) { pool.hidden = !any; pool.open = any; } else { pool.hidden = false; }
      });
      $("#shown").textContent = !narrowing ? ""
        : large && !(found && found.key === criteria()) ? "searching…"
        : large ? hits + " member nodes shown" + (found.matched > found.pools.size ? " (the first " + found.pools.size + " of " + found.matched + " pools that match)" : "")
        : hits + " of " + total + " member nodes shown";
    }
    // `change` too: a cleared box (WebDriver's clear, some browsers' ×)
    // sends no `input`.
    ["input", "change"].forEach((e) => search.addEventListener(e, () => { filter(); remember("q", search.value.trim()); }));
    stateFilter.addEventListener("change", () => { filter(); remember("state", stateFilter.value); });
    regionFilter.addEventListener("change", () => { filter(); remember("region", regionFilter.value); });
    filter();
    $("#expand-all").addEventListener("click", () => {
      // A large canvas opens only the pools shown (search or filter first).
      const large = $(".canvas", topology).dataset.lazy === "true";
      $$("details.pool", topology).filter((d) => !large || !d.hidden).slice(0, large ? 20 : undefined).forEach((d) => { d.open = true; });
    });
    $("#collapse-all").addEventListener("click", () => $$("details.pool", topology).forEach((d) => { d.open = false; }));

    // Incident controls: pause or resume health decisions for every pool
    // or one pool, each confirmed first, naming what it holds.
    function showHold(hold) {
      const state = $("#decisions-state");
      const toggle = $("#decisions-toggle");
      if (state) {
        state.dataset.paused = String(hold.paused);
        state.textContent = hold.paused ? "paused for every pool since " + new Date(hold.pausedSinceMs).toISOString() : "on";
        toggle.textContent = hold.paused ? "Resume decisions for every pool" : "Pause decisions for every pool";
      }
      const held = new Set(hold.pools.map((p) => String(p.poolId)));
      $$("button.pool-decisions", topology).forEach((b) => {
        b.dataset.paused = String(held.has(b.dataset.pool));
        b.textContent = held.has(b.dataset.pool) ? "Resume decisions" : "Pause decisions";
      });
    }
    async function setHold(path, paused) {
      const r = await api("PUT", path, { paused });
      if (!r.ok) return errorOf(r).message;
      showHold(r.data);
      return null;
    }
    const toggle = $("#decisions-toggle");
    if (toggle) {
      toggle.addEventListener("click", () => {
        const paused = $("#decisions-state").dataset.paused === "true";
        confirmThen(
          paused ? "Resume health decisions?" : "Pause health decisions?",
          paused
            ? "Every pool's members will be judged again from the evidence taken in meanwhile; pools paused one by one stay paused."
            : "Every pool's members keep the health they have now, whatever their checks say, until resumed. Answers keep following that health.",
          paused ? "Resume every pool" : "Pause every pool",
          () => setHold("/ui/api/v1/decisions", !paused));
      });
    }
    topology.addEventListener("click", (ev) => {
      const b = ev.target.closest("button.pool-decisions");
      if (!b) return;
      const paused = b.dataset.paused === "true";
      confirmThen(
        (paused ? "Resume" : "Pause") + " health decisions for pool " + b.dataset.name + "?",
        paused
          ? "Pool " + b.dataset.name + "'s members will be judged again from the evidence taken in meanwhile."
          : "Pool " + b.dataset.name + "'s members keep the health they have now, whatever their checks say, until resumed.",
        paused ? "Resume pool " + b.dataset.name : "Pause pool " + b.dataset.name,
        () => setHold("/ui/api/v1/pools/" + b.dataset.pool + "/decisions", !paused));
    });

    // The member slide-over.
    const dialog = $("#slideover");
    const form = $("#member-form");
    const NUMBERS = ["port", "weight", "priority", "warmupThreshold"];
    const TEXTS = ["name", "ipAddress", "region"];
    const FLAGS = ["backup", "enabled", "rewarmAfterDown"];
    let editing = null; // {id, loaded, revision} or {pool}
    function clearErrors() {
      $$("[data-error-for]", form).forEach((e) => { e.textContent = ""; });
      $("#member-error").textContent = "";
      $$("[aria-invalid]", form).forEach((i) => i.removeAttribute("aria-invalid"));
    }
    function fill(m) {
      TEXTS.forEach((k) => { form.elements[k].value = m[k] == null ? "" : String(m[k]); });
      NUMBERS.forEach((k) => { form.elements[k].value = m[k] == null ? "" : String(m[k]); });
      FLAGS.forEach((k) => { form.elements[k].checked = !!m[k]; });
    }
    async function openMember(id) {
      const r = await api("GET", "/ui/api/v1/members/" + id);
      if (!r.ok) { $("#shown").textContent = "Member " + id + ": " + errorOf(r).message; return; }
      clearErrors();
      fill(r.data);
      // What the form showed when opened: a save sends only what the
      // operator changed since, with the revision it was read at.
      remember("member", String(id));
      editing = { id, loaded: null, revision: r.data.revision };
      editing.loaded = collect();
      $("#slideover-title").textContent = "Member " + r.data.name;
      $("#member-log").href = "/ui/members/" + id + "/log";
      $("#member-matrix").href = "/ui/pools/" + r.data.poolId;
      $("#member-history").href = "/ui/audit?object=member/" + id;
      $("#member-delete").hidden = false;
      $(".links", form).hidden = false;
      openDialog(dialog, form.elements.name);
      lockForReaders(dialog);
    }
    function newMember(pool) {
      editing = { pool };
      clearErrors();
      // The defaults are shown, not implied: an emptied field is an error.
      fill({ enabled: true, weight: 100, priority: 0, warmupThreshold: 0 });
      $("#slideover-title").textContent = "New member in pool " + pool;
      $("#member-delete").hidden = true;
      $(".links", form).hidden = true;
      openDialog(dialog, form.elements.name);
    }
    topology.addEventListener("click", (ev) => {
      const node = ev.target.closest("button.member");
      if (node && selecting) { pick(node.dataset.member); return; }
      if (node) { openMember(node.dataset.member); return; }
      const add = ev.target.closest("button.add-member");
      if (add) newMember(add.dataset.pool);
    });
    function collect() {
      const out = {};
      TEXTS.forEach((k) => {
        const v = form.elements[k].value.trim();
        if (k === "region") out.region = v === "" ? null : v;
        else if (v !== "" || editing.id) out[k] = v;
      });
      // Checked by numberErrors first; the API names the range rules.
      NUMBERS.forEach((k) => {
        const v = form.elements[k].value.trim();
        if (/^-?\d+$/.test(v)) out[k] = Number(v);
      });
      FLAGS.forEach((k) => { out[k] = form.elements[k].checked; });
      return out;
    }
    // Only the fields changed since the panel was opened.
    function changed() {
      const now = collect();
      const out = {};
      Object.keys(now).forEach((k) => {
        if (JSON.stringify(now[k]) !== JSON.stringify(editing.loaded[k])) out[k] = now[k];
      });
      return out;
    }
    // A colleague's change since the panel was opened: say so, and offer
    // to load theirs or to save ours over it (at the revision now).
    function stale(current, retry) {
      const box = $("#member-error");
      box.textContent = "Changed since you opened it (now revision " + current + "). ";
      const reload = document.createElement("button");
      reload.type = "button";
      reload.id = "member-reload";
      reload.textContent = "Load their changes";
      reload.addEventListener("click", () => openMember(editing.id));
      const overwrite = document.createElement("button");
      overwrite.type = "button";
      overwrite.id = "member-overwrite";
      overwrite.className = "writes danger";
      overwrite.textContent = "Save mine over theirs";
      overwrite.addEventListener("click", () => retry(current));
      box.append(reload, " ", overwrite);
      // What changed meanwhile, field by field, from the audit log.
      api("GET", "/ui/api/v1/audit?acceptedOnly=true&limit=20&object=member/" + editing.id).then((a) => {
        if (!a.ok) return;
        const lines = [];
        a.data.records.filter((rec) => rec.version > editing.revision).reverse().forEach((rec) => {
          rec.changes.forEach((c) => c.fields.forEach((f) => {
            lines.push(f.field + ": " + JSON.stringify(f.before) + " → " + JSON.stringify(f.after) + " (" + rec.who + ")");
          }));
        });
        if (!lines.length) return;
        const list = document.createElement("ul");
        list.id = "member-changed";
        lines.forEach((l) => { const li = document.createElement("li"); li.textContent = l; list.append(li); });
        box.append(list);
      });
    }
    // Every number field must hold a whole number: empty or text is an
    // error by its field, never "use the default".
    function numberErrors() {
      const bad = [];
      NUMBERS.forEach((k) => {
        const v = form.elements[k].value.trim();
        const label = $('label[for="f-' + k + '"]', form).textContent.split(" (")[0];
        if (v === "") bad.push([k, label + ": required: enter a whole number"]);
        else if (!/^-?\d+$/.test(v)) bad.push([k, label + ": " + JSON.stringify(v) + " is not a whole number"]);
      });
      return bad;
    }
    function fieldError(name, message) {
      $('[data-error-for="' + name + '"]', form).textContent = message;
      form.elements[name].setAttribute("aria-invalid", "true");
    }
    const ifMatch = (revision) => ({ "if-match": '"' + revision + '"' });
    async function save(revision) {
      clearErrors();
      const bad = numberErrors();
      if (bad.length) {
        bad.forEach(([k, m]) => fieldError(k, m));
        form.elements[bad[0][0]].focus();
        return;
      }
      let r;
      if (editing.id) {
        const fields = changed();
        if (!Object.keys(fields).length) { closeDialog(dialog); return; }
        r = await api("PUT", "/ui/api/v1/members/" + editing.id, fields, undefined, ifMatch(revision));
        if (r.status === 412) { stale(r.data.error.currentRevision, save); return; }
      } else {
        r = await api("POST", "/ui/api/v1/pools/" + editing.pool + "/members", collect());
      }
      if (r.ok) { closeDialog(dialog); return; }
      const e = errorOf(r);
      const name = e.field === "address" ? "ipAddress" : e.field.split(".")[0];
      const slot = name && $('[data-error-for="' + name + '"]', form);
      if (slot) {
        fieldError(name, e.message);
        form.elements[name].focus();
      } else {
        $("#member-error").textContent = e.message;
      }
    }
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      save(editing.revision);
    });
    $("#member-delete").addEventListener("click", () => {
      if (!editing.id) return;
      const name = "member " + form.elements.name.value;
      confirmThen("Delete " + name + "?", "The " + name + " leaves its pool and every answer at once (its history stays in the audit log).", "Delete " + name, async () => {
        const r = await api("DELETE", "/ui/api/v1/members/" + editing.id, undefined, undefined, ifMatch(editing.revision));
        if (r.status === 412) return "Changed since you opened it (now revision " + r.data.error.currentRevision + "): reopen it to see what changed before deleting.";
        if (!r.ok) return errorOf(r).message;
        closeDialog(dialog);
        return null;
      });
    });
    $("#member-close").addEventListener("click", () => closeDialog(dialog));
    dialog.addEventListener("closed", () => remember("member", null));

    // Bulk changes: select members, see the plan (each change by name,
    // checked by the server without writing), then apply it all or
    // nothing, each member at the revision the plan read it at.
    const BULK_CONFIRM_ABOVE = 3;
    const selectMode = $("#select-mode");
    const bulk = $("#bulk");
    const selected = new Set();
    let selecting = false;
    let bulkPlan = null; // {ops, deletes, version}
    function bulkReset() {
      bulkPlan = null;
      $("#bulk-result").hidden = true;
      $("#bulk-apply").disabled = true;
      $("#bulk-error").textContent = "";
    }
    function showSelection() {
      $$("button.member", topology).forEach((n) => {
        const on = selected.has(n.dataset.member);
        n.classList.toggle("selected", on);
        if (selecting) n.setAttribute("aria-pressed", String(on)); else n.removeAttribute("aria-pressed");
      });
      $("#bulk-count").textContent = selected.size + " selected";
    }
    function pick(id) {
      if (selected.has(id)) selected.delete(id); else selected.add(id);
      bulkReset();
      showSelection();
    }
    selectMode.addEventListener("click", () => {
      selecting = !selecting;
      selectMode.setAttribute("aria-pressed", String(selecting));
      selectMode.textContent = selecting ? "Done selecting" : "Select members";
      bulk.hidden = !selecting;
      if (!selecting) selected.clear();
      bulkReset();
      showSelection();
    });
    topology.addEventListener("gslb:drawn", showSelection);
    $("#bulk-clear").addEventListener("click", () => { selected.clear(); bulkReset(); showSelection(); });
    $("#bulk-action").addEventListener("change", () => {
      $("#bulk-weight-field").hidden = $("#bulk-action").value !== "weight";
      bulkReset();
    });
    $("#bulk-weight").addEventListener("input", bulkReset);
    const bulkTyped = $("#bulk-typed");
    function bulkGate() {
      const typedOk = !bulkPlan || bulkPlan.deletes <= BULK_CONFIRM_ABOVE || bulkTyped.value.trim() === "delete " + bulkPlan.deletes;
      $("#bulk-apply").disabled = !canWrite || !bulkPlan || !bulkPlan.ops.length || !typedOk;
    }
    bulkTyped.addEventListener("input", bulkGate);
    $("#bulk-plan").addEventListener("click", async () => {
      bulkReset();
      const fail = (message) => { $("#bulk-error").textContent = message; };
      if (!selected.size) { fail("Select one or more members first."); return; }
      const action = $("#bulk-action").value;
      let field = null;
      if (action === "weight") {
        const v = $("#bulk-weight").value.trim();
        if (!/^\d+$/.test(v)) { fail("Weight: " + (v ? JSON.stringify(v) + " is not a whole number" : "required: enter a whole number")); return; }
        field = ["weight", Number(v)];
      } else if (action !== "delete") {
        field = ["enabled", action === "enable"];
      }
      // Each member as it stands now, read per pool, with its revision.
      const poolOf = (id) => (nodes.get(Number(id)) || [])[0];
      const current = new Map();
      const poolIds = new Set([...selected].map((id) => {
        const node = poolOf(id);
        return node ? node.closest("details.pool").dataset.pool : null;
      }));
      for (const pool of poolIds) {
        if (pool === null) continue;
        const r = await api("GET", "/ui/api/v1/pools/" + pool + "/members");
        if (!r.ok) { fail(errorOf(r).message); return; }
        r.data.forEach((m) => current.set(String(m.id), m));
      }
      const ops = [];
      const lines = [];
      let deletes = 0, kept = 0;
      for (const id of selected) {
        const m = current.get(id);
        const node = poolOf(id);
        if (!m || !node) { fail("A selected member no longer exists: clear the selection and select again."); return; }
        const name = $(".pname", node.closest("details.pool")).textContent.replace(/^pool /, "") + "/" + m.name;
        if (action === "delete") {
          ops.push({ op: "ifRevision", revision: m.revision, write: { op: "delete", kind: "member", id: m.id } });
          lines.push("- member " + name);
          deletes += 1;
          continue;
        }
        const [key, value] = field;
        if (m[key] === value) { lines.push("= member " + name + ": " + key + " is " + value + " already"); kept += 1; continue; }
        ops.push({ op: "ifRevision", revision: m.revision, write: { op: "patch", target: { kind: "member", id: m.id }, fields: { [key]: value } } });
        lines.push("~ member " + name + ": " + key + " " + m[key] + " \u2192 " + value);
      }
      const r = ops.length ? await api("POST", "/ui/api/v1/apply", { ops, dryRun: true }) : { ok: true, data: {} };
      if (!r.ok) { fail(errorOf(r).message); return; }
      bulkPlan = { ops, deletes, version: r.data.catalogVersion };
      showLines("bulk", "Plan: ~" + (ops.length - deletes) + " \u2212" + deletes + (kept ? " (" + kept + " unchanged)" : ""), lines);
      $("#bulk-typed-field").hidden = deletes <= BULK_CONFIRM_ABOVE;
      bulkTyped.value = "";
      $("#bulk-typed-label").textContent = "This deletes " + deletes + " members: type \u201cdelete " + deletes + "\u201d to confirm";
      bulkGate();
    });
    $("#bulk-apply").addEventListener("click", async () => {
      if (!bulkPlan) return;
      const r = await api("POST", "/ui/api/v1/apply", { ops: bulkPlan.ops, expectVersion: bulkPlan.version });
      if (r.status === 412) {
        $("#bulk-error").textContent = "Changed since this plan was made: show the plan again. " + errorOf(r).message;
        bulkPlan = null;
        bulkGate();
        return;
      }
      if (!r.ok) { $("#bulk-error").textContent = errorOf(r).message; return; }
      const done = bulkPlan.ops.length;
      bulkPlan = null;
      selected.clear();
      showSelection();
      $("#bulk-heading").textContent = "Applied " + done + " changes, version " + r.data.version;
      $("#bulk-typed-field").hidden = true;
      bulkGate();
    });
    // A link to a member opens its panel.
    if (/^\d+$/.test(asked.get("member") || "")) openMember(asked.get("member"));
  }

  // ---- probe matrix: fetched every few seconds while shown (results
  // arrive every cycle, state changes or not), sooner after a state change
  // (at most once a second); each result's age counts from its arrival ----
  const matrix = $("#matrix");
  if (matrix) {
    const every = Number(matrix.dataset.refreshMs) || 2000;
    let last = 0;
    let pending = null;
    const reload = async () => {
      pending = null;
      last = Date.now();
      if (await refetch("/ui/pools/" + matrix.dataset.pool + "/matrix", matrix)) {
        const at = $("#matrix-at");
        at.dateTime = new Date().toISOString();
        at.textContent = new Date().toLocaleTimeString();
        ages();
      }
    };
    const soon = (wait) => {
      if (pending) return;
      pending = setTimeout(reload, Math.max(0, wait - (Date.now() - last)));
    };
    function ages() {
      const now = Date.now();
      $$(".age[data-at]", matrix).forEach((el) => { el.textContent = ago(now - Number(el.dataset.at)); });
    }
    setInterval(() => { if (!document.hidden) soon(every); }, every);
    setInterval(ages, 1000);
    listen({ tick: () => soon(1000) });
  }

  // ---- a member's health log: fetched again when the stream reports a
  // change of the member (at most once a second) ----
  const log = $("#log");
  if (log) {
    const id = Number(log.dataset.member);
    let last = 0;
    let pending = null;
    const reload = async () => {
      pending = null;
      last = Date.now();
      const r = await fetch(location.pathname, { credentials: "same-origin" });
      if (!r.ok) return;
      const fresh = new DOMParser().parseFromString(await r.text(), "text/html").querySelector("#log");
      if (fresh && fresh.innerHTML !== log.innerHTML) log.replaceChildren(...fresh.childNodes);
    };
    const soon = () => {
      if (pending) return;
      pending = setTimeout(reload, Math.max(0, 1000 - (Date.now() - last)));
    };
    // The first snapshot is the state the page was rendered with; a later
    // one (after a reconnect) may follow missed entries.
    let connected = false;
    listen({
      snapshot: () => { if (connected) soon(); connected = true; },
      changes: (c) => { if (c.members.some((m) => m.id === id)) soon(); },
    });
  }

  // ---- declarative apply ----
  const applyForm = $("#apply-form");
  if (applyForm) {
    const text = $("#apply-text");
    const confirmButton = $("#apply-confirm");
    const show = (heading, lines) => showLines("apply", heading, lines);
    // The catalog version the shown plan was made against: Apply sends it,
    // so a catalog that moved meanwhile is refused, not applied blind.
    let planned = null;
    const query = (dry) => "/ui/api/v1/config?dryRun=" + dry + ($("#apply-prune").checked ? "&prune=true" : "")
      + (!dry && planned !== null ? "&expectVersion=" + planned : "");
    $("#apply-file").addEventListener("change", async (ev) => {
      const file = ev.target.files[0];
      if (file) { text.value = await file.text(); invalidate(); }
    });
    text.addEventListener("input", () => { invalidate(); });
    const prune = $("#apply-prune");
    const typedField = $("#apply-typed-field");
    const typed = $("#apply-typed");
    const confirmAbove = Number($("#apply-form .actions").dataset.confirmAbove) || 3;
    // What Apply needs before it may go: a plan (made with the prune box
    // as it is now) and, for many deletions, the count typed.
    let need = null; // {deletes, blocked} of the shown plan
    function gate() {
      if (!need || !canWrite || need.blocked || need.empty) { confirmButton.disabled = true; return; }
      confirmButton.disabled = need.deletes > confirmAbove && typed.value.trim() !== "delete " + need.deletes;
    }
    const invalidate = () => { need = null; typedField.hidden = true; gate(); };
    prune.addEventListener("change", invalidate);
    typed.addEventListener("input", gate);
    // `+ … ~ … - … = …` lines: counted, and deletions marked as kept when
    // prune is off (Apply then stays off: it would be refused).
    function describe(lines, pruning) {
      const count = (p) => lines.filter((l) => l.startsWith(p)).length;
      const adds = count("+ "), updates = count("~ "), deletes = count("- ");
      const blocked = deletes > 0 && !pruning;
      const shown = lines.map((l) => l.startsWith("- ") && blocked ? l + " (left out of the document; deleted only with prune ticked)" : l);
      const counts = "+" + adds + " ~" + updates + " −" + deletes;
      return { adds, updates, deletes, blocked, counts, shown, empty: adds + updates + deletes === 0 };
    }
    $("#apply-plan").addEventListener("click", async () => {
      $("#apply-error").textContent = "";
      const pruning = prune.checked;
      const r = await api("POST", query(true), text.value, "text/plain");
      if (!r.ok) { $("#apply-error").textContent = errorOf(r).message; invalidate(); return; }
      planned = r.data.catalogVersion;
      const d = describe(r.data.plan, pruning);
      need = d;
      show("Plan: " + d.counts, d.shown.length ? d.shown : ["no changes"]);
      $("#apply-counts").textContent = d.empty ? "Nothing to do."
        : d.blocked ? "The document leaves out " + d.deletes + " object(s) that exist. Apply is off: list them in the document, or tick \u201cDelete what the document leaves out\u201d and show the plan again."
        : "Apply will create " + d.adds + ", change " + d.updates + " and delete " + d.deletes + " object(s), all or nothing.";
      typedField.hidden = !(d.deletes > confirmAbove && !d.blocked);
      typed.value = "";
      $("#apply-typed-label").textContent = "This deletes " + d.deletes + " objects: type \u201cdelete " + d.deletes + "\u201d to confirm";
      gate();
    });
    confirmButton.addEventListener("click", async () => {
      $("#apply-error").textContent = "";
      const r = await api("POST", query(false), text.value, "text/plain");
      if (r.status === 412) {
        $("#apply-error").textContent = "The catalog changed since this plan was made: show the plan again. " + errorOf(r).message;
        invalidate();
        return;
      }
      if (!r.ok) { $("#apply-error").textContent = errorOf(r).message; return; }
      const d = describe(r.data.plan, true);
      show("Applied " + d.counts + ", version " + r.data.version, d.shown);
      $("#apply-counts").textContent = "";
      invalidate();
    });
  }

  // ---- objects: zones, records, pools, checks, each in a form ----
  const editor = $("#object-editor");
  if (editor) {
    const area = $("#object-json");
    const fieldsBox = $("#object-fields");
    const asJson = $("#object-as-json");
    const names = JSON.parse(editor.dataset.names || "{}");
    // A field: its key path in the REST JSON, label, kind, and (for a
    // probe's fields) the probe types it belongs to. Kinds: text, int,
    // real, duration, lines (one per line), ref (one object by name),
    // refs (several, by name), select, flag, rdata.
    const PROBES = ["http", "https", "tcp", "udp", "dns", "grpc"];
    const PROBE_DEFAULTS = {
      http: { method: "GET", path: "/" },
      https: { method: "GET", path: "/" },
      dns: { queryName: ".", queryType: "SOA" },
    };
    const SPECS = {
      zones: [
        { k: "apex", l: "Apex (the zone's name)", t: "text" },
        { k: "ns", l: "Name servers (one per line)", t: "lines" },
        { k: "defaultTtl", l: "Default TTL (seconds)", t: "int" },
        { k: "soa.mname", l: "SOA primary name server", t: "text" },
        { k: "soa.rname", l: "SOA responsible mailbox (as a name)", t: "text" },
        { k: "soa.refresh", l: "SOA refresh (seconds)", t: "int" },
        { k: "soa.retry", l: "SOA retry (seconds)", t: "int" },
        { k: "soa.expire", l: "SOA expire (seconds)", t: "int" },
        { k: "soa.negativeTtl", l: "Negative TTL (seconds)", t: "int" },
      ],
      pools: [
        { k: "name", l: "Name", t: "text" },
        { k: "check", l: "Health check", t: "ref", of: "checks", none: "no check (members are up unless set otherwise)" },
        { k: "minHealthy", l: "Members that must be healthy", t: "int" },
        { k: "failMode", l: "When too few are healthy", t: "select", options: [["open", "fail open: answer with every member"], ["closed", "fail closed: answer nothing from this pool"], ["static", "static: answer with the fallback"]] },
        { k: "protectThreshold", l: "Protection threshold (0 to 1 of members healthy)", t: "real" },
        { k: "fallback", l: "Fallback addresses, answered when failing static (one per line)", t: "lines" },
      ],
      checks: [
        { k: "name", l: "Name", t: "text" },
        { k: "probe.type", l: "Probe", t: "select", options: PROBES.map((p) => [p, p]) },
        { k: "interval", l: "Interval (e.g. 2s, 500ms)", t: "duration" },
        { k: "timeout", l: "Timeout", t: "duration" },
        { k: "port", l: "Port (empty: the member's)", t: "int", empty: null },
        { k: "rise", l: "Healthy when this share of locations passes (0 to 1)", t: "real" },
        { k: "fall", l: "Unhealthy when this share or fewer passes (0 to 1)", t: "real" },
        { k: "window", l: "Results kept per location", t: "int" },
        { k: "probe.method", l: "HTTP method", t: "text", on: ["http", "https"] },
        { k: "probe.path", l: "Path", t: "text", on: ["http", "https"] },
        { k: "probe.expectedStatus", l: "Expected status codes (one per line; none: 2xx and 3xx)", t: "lines", ints: true, on: ["http", "https"] },
        { k: "probe.send", l: "Bytes to send (text, or hex: …)", t: "text", on: ["tcp", "udp"] },
        { k: "probe.expect", l: "Expected in the reply (empty: anything)", t: "text", empty: null, on: ["tcp", "udp"] },
        { k: "probe.queryName", l: "Query name", t: "text", on: ["dns"] },
        { k: "probe.queryType", l: "Query type", t: "text", on: ["dns"] },
        { k: "probe.service", l: "gRPC service (empty: the server)", t: "text", on: ["grpc"] },
        { k: "probe.tls", l: "TLS", t: "flag", on: ["grpc"] },
      ],
      dynamic: [
        { k: "zone", l: "Zone", t: "ref", of: "zones" },
        { k: "name", l: "Name", t: "text" },
        { k: "type", l: "Type", t: "select", options: [["A", "A"], ["AAAA", "AAAA"], ["CNAME", "CNAME (hostname members)"]] },
        { k: "ttl", l: "TTL (seconds)", t: "int" },
        { k: "data.dynamic.steering", l: "Steering", t: "select", options: [["roundrobin", "round robin"], ["weighted", "weighted"], ["sticky", "sticky (same members per client subnet)"], ["latency", "latency (fastest from the client's region)"]] },
        { k: "data.dynamic.pools", l: "Pools, in order of priority", t: "refs", of: "pools" },
        { k: "data.dynamic.firstN", l: "Answer with at most this many (0: all)", t: "int" },
        { k: "data.dynamic.geo", l: "Geo branches (the first that matches answers; else the pools above)", t: "geo" },
        { k: "data.dynamic.regionLocations", l: "Latency regions (one per line: region: location, location)", t: "map" },
        { k: "data.dynamic.flatten", l: "Answer a hostname member with its addresses (flatten)", t: "flag" },
      ],
      static: [
        { k: "zone", l: "Zone", t: "ref", of: "zones" },
        { k: "name", l: "Name", t: "text" },
        { k: "type", l: "Type", t: "select", options: ["A", "AAAA", "CNAME", "TXT", "MX", "NS", "PTR", "SRV", "CAA"].map((x) => [x, x]) },
        { k: "ttl", l: "TTL (seconds)", t: "int" },
        { k: "data.static", l: "Records, one per line", t: "rdata" },
      ],
    };
    // Static records by type, one per line as in a zone file (without
    // name, class or type).
    const RDATA = {
      A: { hint: "192.0.2.1", read: (l) => ({ a: l }), show: (r) => r.a },
      AAAA: { hint: "2001:db8::1", read: (l) => ({ aaaa: l }), show: (r) => r.aaaa },
      CNAME: { hint: "target.example.test", read: (l) => ({ cname: l }), show: (r) => r.cname },
      NS: { hint: "ns1.example.test", read: (l) => ({ ns: l }), show: (r) => r.ns },
      PTR: { hint: "host.example.test", read: (l) => ({ ptr: l }), show: (r) => r.ptr },
      TXT: { hint: "v=spf1 -all", read: (l) => ({ txt: [l] }), show: (r) => r.txt.join("") },
      MX: { hint: "10 mail.example.test", parts: ["preference", "exchange"], ints: [0] },
      SRV: { hint: "10 5 443 host.example.test", parts: ["priority", "weight", "port", "target"], ints: [0, 1, 2] },
      CAA: { hint: "0 issue letsencrypt.org", parts: ["flags", "tag", "value"], ints: [0] },
    };
    function readRdata(type, line) {
      const kind = RDATA[type];
      if (!kind) throw new Error("type " + type + " is edited as JSON");
      if (kind.read) return kind.read(line);
      const words = line.split(/\s+/);
      if (words.length < kind.parts.length) throw new Error(JSON.stringify(line) + ": " + type + " needs " + kind.parts.join(", "));
      const rest = words.slice(kind.parts.length - 1).join(" ");
      const value = {};
      kind.parts.forEach((p, i) => {
        const word = i === kind.parts.length - 1 ? rest : words[i];
        if (kind.ints.includes(i)) {
          if (!/^\d+$/.test(word)) throw new Error(JSON.stringify(line) + ": " + p + " must be a whole number");
          value[p] = Number(word);
        } else value[p] = word;
      });
      return { [type.toLowerCase()]: value };
    }
    function showRdata(type, r) {
      const kind = RDATA[type];
      if (!kind || !(type.toLowerCase() in r)) return JSON.stringify(r);
      if (kind.show) return kind.show(r);
      const v = r[type.toLowerCase()] || {};
      return kind.parts.map((p) => String(v[p])).join(" ");
    }
    const get = (obj, path) => path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
    function set(obj, path, value) {
      const keys = path.split(".");
      let o = obj;
      keys.slice(0, -1).forEach((k) => { if (o[k] == null || typeof o[k] !== "object") o[k] = {}; o = o[k]; });
      o[keys[keys.length - 1]] = value;
    }
    const specOf = (kind, value) => kind === "records" ? (value.data && value.data.static ? SPECS.static : SPECS.dynamic) : SPECS[kind];
    const nameOf = (of, id) => ((names[of] || []).find(([i]) => i === id) || [id, "#" + id])[1];
    let target = null; // {kind, id?, original, value (the JSON the form edits)}
    // The form for `value`, field by field.
    function build() {
      const value = target.value;
      const probe = get(value, "probe.type");
      fieldsBox.replaceChildren();
      specOf(target.kind, value).forEach((f) => {
        if (f.on && !f.on.includes(probe)) return;
        const id = "of-" + f.k.replace(/\./g, "-");
        const wrap = document.createElement("div");
        wrap.className = f.t === "flag" ? "field check" : "field";
        const label = document.createElement("label");
        label.htmlFor = id;
        label.textContent = f.l;
        let input;
        const current = get(value, f.k);
        if (f.t === "select" || f.t === "ref") {
          input = document.createElement("select");
          const options = f.t === "ref" ? (f.none ? [["", f.none]] : []).concat((names[f.of] || []).map(([i, n]) => [String(i), n])) : f.options;
          options.forEach(([v, text]) => input.append(new Option(text, v)));
          input.value = current == null ? "" : String(current);
        } else if (f.t === "refs") {
          input = document.createElement("select");
          input.multiple = true;
          input.size = Math.min(6, Math.max(2, (names[f.of] || []).length));
          const chosen = (current || []).map(Number);
          // Chosen first, in their order: the order is the priority.
          chosen.concat((names[f.of] || []).map(([i]) => i).filter((i) => !chosen.includes(i))).forEach((i) => {
            const o = new Option(nameOf(f.of, i), String(i));
            o.selected = chosen.includes(i);
            input.append(o);
          });
        } else if (f.t === "lines" || f.t === "rdata") {
          input = document.createElement("textarea");
          input.rows = 3;
          const type = value.type;
          input.value = f.t === "rdata" ? (current || []).map((r) => showRdata(type, r)).join("\n") : (current || []).join("\n");
          if (f.t === "rdata" && RDATA[type]) input.placeholder = RDATA[type].hint;
        } else if (f.t === "flag") {
          input = document.createElement("input");
          input.type = "checkbox";
          input.checked = !!current;
        } else if (f.t === "geo") {
          input = geoEditor(current || []);
        } else if (f.t === "map") {
          input = document.createElement("textarea");
          input.rows = 2;
          input.value = Object.entries(current || {}).map(([k, v]) => k + ": " + v.join(", ")).join("\n");
        } else {
          input = document.createElement("input");
          input.type = "text";
          if (f.t === "int" || f.t === "real") input.inputMode = f.t === "int" ? "numeric" : "decimal";
          input.value = current == null ? "" : String(current);
        }
        input.id = id;
        input.dataset.key = f.k;
        const error = document.createElement("span");
        error.className = "field-error";
        error.id = "e-" + id;
        error.setAttribute("role", "alert");
        error.dataset.errorFor = f.k;
        input.setAttribute("aria-describedby", error.id);
        if (f.t === "flag") wrap.append(input, label, error);
        else if (f.t === "geo") { $("legend", input).textContent = f.l; wrap.append(input, error); }
        else wrap.append(label, input, error);
        fieldsBox.append(wrap);
        // Another probe type shows other fields; another record type
        // another example.
        if (f.k === "probe.type") input.addEventListener("change", () => { collect(true); build(); lockForReaders(editor); });
        if (f.k === "type") {
          input.addEventListener("change", () => {
            const lines = $('[data-key="data.static"]', fieldsBox);
            if (lines) lines.placeholder = (RDATA[input.value] || { hint: "" }).hint;
          });
        }
      });
    }
    // Geo branches: per branch, what it matches (each a comma-separated
    // list) and its pools by name; branches added and removed in place.
    const GEO_KEYS = [["regions", "Regions"], ["countries", "Countries (DE, FR)"], ["continents", "Continents (EU, NA)"], ["subdivisions", "Subdivisions (US-CA)"], ["asns", "AS numbers"]];
    // Ids stay unique as branches come and go.
    let geoSeq = 0;
    function geoBranch(branch, n) {
      geoSeq += 1;
      const seq = geoSeq;
      const box = document.createElement("fieldset");
      box.className = "branch";
      const legend = document.createElement("legend");
      legend.textContent = "Branch " + n;
      box.append(legend);
      GEO_KEYS.forEach(([key, text]) => {
        const id = "geo-" + seq + "-" + key;
        const label = document.createElement("label");
        label.htmlFor = id;
        label.textContent = text;
        const input = document.createElement("input");
        input.type = "text";
        input.id = id;
        input.dataset.geo = key;
        input.value = (branch[key] || []).join(", ");
        box.append(label, input);
      });
      const label = document.createElement("label");
      label.htmlFor = "geo-" + seq + "-pools";
      label.textContent = "Pools, in order";
      const pools = document.createElement("select");
      pools.multiple = true;
      pools.id = "geo-" + seq + "-pools";
      pools.dataset.geo = "pools";
      const chosen = (branch.pools || []).map(Number);
      chosen.concat((names.pools || []).map(([i]) => i).filter((i) => !chosen.includes(i))).forEach((i) => {
        const o = new Option(nameOf("pools", i), String(i));
        o.selected = chosen.includes(i);
        pools.append(o);
      });
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "writes";
      remove.textContent = "Remove branch " + n;
      remove.addEventListener("click", () => { box.remove(); });
      box.append(label, pools, remove);
      return box;
    }
    function geoEditor(branches) {
      const set = document.createElement("fieldset");
      set.append(document.createElement("legend"));
      const list = document.createElement("div");
      branches.forEach((b, i) => list.append(geoBranch(b, i + 1)));
      const add = document.createElement("button");
      add.type = "button";
      add.className = "writes";
      add.textContent = "Add a geo branch";
      add.addEventListener("click", () => list.append(geoBranch({}, list.children.length + 1)));
      set.append(list, add);
      return set;
    }
    function readGeo(set, bad) {
      return $$("fieldset.branch", set).map((box, i) => {
        const branch = {};
        GEO_KEYS.forEach(([key]) => {
          const words = $('[data-geo="' + key + '"]', box).value.split(",").map((w) => w.trim()).filter(Boolean);
          if (!words.length) return;
          if (key === "asns" && words.some((w) => !/^\d+$/.test(w))) { bad("branch " + (i + 1) + ": AS numbers must be whole numbers"); return; }
          branch[key] = key === "asns" ? words.map(Number) : words;
        });
        branch.pools = Array.from($('[data-geo="pools"]', box).selectedOptions).map((o) => Number(o.value));
        return branch;
      });
    }

    // The form's values laid over the JSON it was built from; with
    // `quiet`, what cannot be read is left as it was. Errors by field.
    function collect(quiet) {
      const value = JSON.parse(JSON.stringify(target.value));
      const errors = [];
      const probeWas = get(value, "probe.type");
      specOf(target.kind, value).forEach((f) => {
        const input = $('[data-key="' + f.k + '"]', fieldsBox);
        // A field of the probe type the form showed, not of the one chosen.
        if (!input || (f.on && !f.on.includes(get(value, "probe.type")))) return;
        const raw = (input.value || "").trim();
        const bad = (m) => errors.push([f.k, f.l.split(" (")[0] + ": " + m]);
        if (f.t === "int") {
          if (raw === "" && "empty" in f) set(value, f.k, f.empty);
          else if (!/^\d+$/.test(raw)) bad(raw === "" ? "required: enter a whole number" : JSON.stringify(raw) + " is not a whole number");
          else set(value, f.k, Number(raw));
        } else if (f.t === "real") {
          if (!/^\d+(\.\d+)?$/.test(raw)) bad(raw === "" ? "required: enter a number" : JSON.stringify(raw) + " is not a number");
          else set(value, f.k, Number(raw));
        } else if (f.t === "ref") {
          set(value, f.k, raw === "" ? null : Number(raw));
        } else if (f.t === "refs") {
          set(value, f.k, Array.from(input.selectedOptions).map((o) => Number(o.value)));
        } else if (f.t === "lines") {
          const lines = input.value.split("\n").map((l) => l.trim()).filter(Boolean);
          if (f.ints && lines.some((l) => !/^\d+$/.test(l))) bad("one whole number per line");
          else set(value, f.k, f.ints ? lines.map(Number) : lines);
        } else if (f.t === "rdata") {
          try {
            set(value, f.k, input.value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => readRdata(value.type, l)));
          } catch (e) { bad(e.message); }
        } else if (f.t === "flag") {
          set(value, f.k, input.checked);
        } else if (f.t === "geo") {
          set(value, f.k, readGeo(input, bad));
        } else if (f.t === "map") {
          const map = {};
          input.value.split("\n").map((l) => l.trim()).filter(Boolean).forEach((l) => {
            const [region, rest] = l.split(":");
            if (rest === undefined) { bad(JSON.stringify(l) + " must read region: location, location"); return; }
            map[region.trim()] = rest.split(",").map((w) => w.trim()).filter(Boolean);
          });
          set(value, f.k, map);
        } else if (f.t === "select" && f.k === "probe.type" && raw !== probeWas) {
          // Another kind of probe: its own fields, each shown with its
          // default where one must be given.
          set(value, "probe", Object.assign({ type: raw }, PROBE_DEFAULTS[raw] || {}));
        } else {
          set(value, f.k, raw === "" && "empty" in f ? f.empty : raw);
        }
      });
      // Quietly, a probe type changes even if another field is unreadable.
      if (quiet && !errors.length) target.value = value;
      else if (quiet && value.probe) target.value.probe = value.probe;
      return { value, errors };
    }
    function clearObjectErrors() {
      $("#object-error").textContent = "";
      $$("[data-error-for]", fieldsBox).forEach((e) => { e.textContent = ""; });
      $$("[aria-invalid]", fieldsBox).forEach((i) => i.removeAttribute("aria-invalid"));
    }
    // A refusal under the field it names (the form's or the JSON's box).
    function objectError(field, message) {
      const slot = !asJson.checked && field && $('[data-error-for="' + field + '"]', fieldsBox);
      if (slot) {
        slot.textContent = message;
        const input = $('[data-key="' + field + '"]', fieldsBox);
        input.setAttribute("aria-invalid", "true");
        input.focus();
      } else {
        $("#object-error").textContent = message;
      }
    }
    function showAs(json) {
      asJson.checked = json;
      $("#object-json-field").hidden = !json;
      fieldsBox.hidden = json;
      if (json) area.value = JSON.stringify(target.value, null, 2);
      else build();
      lockForReaders(editor);
    }
    asJson.addEventListener("change", () => {
      clearObjectErrors();
      if (asJson.checked) {
        const { errors } = collect(true);
        if (errors.length) { asJson.checked = false; errors.forEach(([k, m]) => objectError(k, m)); return; }
        showAs(true);
        return;
      }
      try { target.value = JSON.parse(area.value); } catch (e) { asJson.checked = true; $("#object-error").textContent = "JSON: " + e.message; return; }
      showAs(false);
    });
    const label = (kind, value) => ({ zones: "zone " + value.apex, pools: "pool " + value.name, checks: "check " + value.name, records: "record " + value.name + " " + value.type })[kind];
    // The open form lives in the address (`?edit=pools/4`, `?new=checks`):
    // a link or a reload opens it again.
    function rememberForm(value) {
      const now = new URLSearchParams(location.search);
      ["edit", "new"].forEach((k) => now.delete(k));
      if (value) now.set(value[0], value[1]);
      // A slash needs no escape in a query: `edit=pools/4` reads better.
      const query = now.toString().replace(/%2F/g, "/");
      history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
    }
    editor.addEventListener("closed", () => rememberForm(null));
    function edit(kind, id, json) {
      rememberForm(id ? ["edit", kind + "/" + id] : ["new", kind]);
      const value = JSON.parse(json);
      target = { kind, id, original: JSON.parse(json), value };
      $("#object-title").textContent = id ? "Edit " + label(kind, value) : "New " + (kind === "records" ? (value.data.static ? "static record" : "pool-backed record") : kind.replace(/s$/, ""));
      clearObjectErrors();
      openDialog(editor, null);
      showAs(false);
      const first = $("input, select, textarea", fieldsBox);
      if (first) first.focus();
    }
    document.addEventListener("click", async (ev) => {
      const b = ev.target.closest("button");
      if (!b) return;
      const row = b.closest("li.object");
      if (b.classList.contains("edit") && row) edit(row.dataset.kind, row.dataset.id, b.dataset.json);
      else if (b.classList.contains("create")) edit(b.dataset.kind, null, b.dataset.json);
      else if (b.classList.contains("delete") && row) {
        const what = row.dataset.kind.replace(/s$/, "") + " " + row.dataset.name;
        confirmThen("Delete " + what + "?", "The " + what + " is deleted for good (its history stays in the audit log). A change since this page was loaded is refused.", "Delete " + what, async () => {
          const r = await api("DELETE", "/ui/api/v1/" + row.dataset.kind + "/" + row.dataset.id, undefined, undefined,
            { "if-match": '"' + row.dataset.revision + '"' });
          if (!r.ok) return errorOf(r).message;
          location.reload();
          return null;
        });
      }
    });
    $("#object-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearObjectErrors();
      let value;
      if (asJson.checked) {
        try { value = JSON.parse(area.value); } catch (e) { $("#object-error").textContent = "JSON: " + e.message; return; }
      } else {
        const { value: v, errors } = collect(false);
        if (errors.length) { errors.forEach(([k, m]) => objectError(k, m)); return; }
        value = v;
      }
      let r;
      if (target.id) {
        // Only the fields changed (a field taken out resets to its
        // default), with the revision it was read at: the core merges them
        // into the object as it stands, so a colleague's change to another
        // field survives.
        const changed = { revision: target.original.revision };
        const keys = new Set(Object.keys(target.original).concat(Object.keys(value)));
        keys.forEach((k) => {
          if (k === "revision" || k === "id") return;
          const was = JSON.stringify(target.original[k]), now = JSON.stringify(value[k]);
          if (was !== now) changed[k] = k in value ? value[k] : null;
        });
        if (Object.keys(changed).length === 1) { closeDialog(editor); return; }
        r = await api("PUT", "/ui/api/v1/" + target.kind + "/" + target.id, changed);
      } else {
        r = await api("POST", "/ui/api/v1/" + target.kind, value);
      }
      if (r.ok) { rememberForm(null); location.reload(); return; }
      const e = errorOf(r);
      // The JSON carries the revision it was read at: a colleague's
      // change since is refused, never overwritten.
      if (r.status === 412) {
        $("#object-error").textContent = "Changed since this page was loaded (now revision " + e.currentRevision + "): reload the page to edit the current object. " + e.message;
        return;
      }
      objectError(e.field, e.message);
    });
    $("#object-close").addEventListener("click", () => closeDialog(editor));
    const linked = new URLSearchParams(location.search);
    const [kind, id] = (linked.get("edit") || "").split("/");
    const row = kind && id && $('li.object[data-kind="' + kind + '"][data-id="' + id + '"]');
    if (row) edit(kind, id, $("button.edit", row).dataset.json);
    const fresh = linked.get("new") && $('button.create[data-kind="' + linked.get("new") + '"]');
    if (fresh) edit(fresh.dataset.kind, null, fresh.dataset.json);
  }

  // ---- TSIG keys: made with a secret shown once, deleted on confirmation ----
  const tsigForm = $("#tsig-form");
  if (tsigForm) {
    tsigForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      $("#tsig-error").textContent = "";
      const name = $("#tsig-name").value.trim();
      const r = await api("POST", "/ui/api/v1/tsig-keys", { name });
      if (!r.ok) { $("#tsig-error").textContent = errorOf(r).message; return; }
      $("#tsig-made").hidden = false;
      $("#tsig-secret").textContent = r.data.secret || "";
      const li = document.createElement("li");
      li.className = "object";
      li.textContent = r.data.name + " (made now; reload to manage it)";
      $("#tsig-keys").append(li);
      $("#tsig-name").value = "";
    });
    $("#tsig-keys").addEventListener("click", (ev) => {
      const b = ev.target.closest("button.delete");
      if (!b) return;
      const row = b.closest("li.object");
      const what = "TSIG key " + row.dataset.name;
      confirmThen("Delete " + what + "?", "Transfers and NOTIFY signed with it stop working at once.", "Delete " + what, async () => {
        const r = await api("DELETE", "/ui/api/v1/tsig-keys/" + row.dataset.id, undefined, undefined, { "if-match": '"' + row.dataset.revision + '"' });
        if (!r.ok) return errorOf(r).message;
        row.remove();
        return null;
      });
    });
  }

  // ---- DNSSEC: start a rollover, say the new DS is published ----
  $$("section.signed").forEach((zone) => {
    const apex = zone.dataset.apex;
    $$("button.rollover", zone).forEach((b) => b.addEventListener("click", () => {
      const role = b.dataset.role;
      confirmThen("Start a " + role.toUpperCase() + " rollover of " + apex + "?",
        "A new key is made and rolled in step by step; a KSK or CSK rollover waits for its new DS at the parent.",
        "Start the rollover", async () => {
          const r = await api("POST", "/ui/api/v1/zones/" + zone.dataset.zone + "/dnssec/rollover", { role });
          if (!r.ok) return errorOf(r).message;
          location.reload();
          return null;
        });
    }));
    const seen = $("button.ds-seen", zone);
    if (seen) seen.addEventListener("click", () => {
      confirmThen("Is the new DS of " + apex + " published at the parent?",
        "Say so only once the parent serves it: the old key is retired from here on.",
        "The DS is published", async () => {
          const r = await api("POST", "/ui/api/v1/zones/" + zone.dataset.zone + "/dnssec/ds-seen");
          if (!r.ok) return errorOf(r).message;
          location.reload();
          return null;
        });
    });
  });

  // ---- zone files: the import's plan first, then the import ----
  const zoneForm = $("#zonefile-form");
  if (zoneForm) {
    const importButton = $("#zonefile-apply");
    let planned = false;
    const query = (dry) => "/ui/api/v1/zonefile?apex=" + encodeURIComponent($("#zonefile-apex").value) + "&dryRun=" + dry
      + ($("#zonefile-prune").checked ? "&prune=true" : "") + ($("#zonefile-strip").checked ? "&stripDnssec=true" : "");
    const invalidate = () => { planned = false; importButton.disabled = true; };
    ["#zonefile-apex", "#zonefile-prune", "#zonefile-strip"].forEach((sel) => $(sel).addEventListener("change", invalidate));
    $("#zonefile-text").addEventListener("input", invalidate);
    $("#zonefile-file").addEventListener("change", async (ev) => {
      const file = ev.target.files[0];
      if (file) { $("#zonefile-text").value = await file.text(); invalidate(); }
    });
    async function run(dry) {
      $("#zonefile-error").textContent = "";
      const r = await api("POST", query(dry), $("#zonefile-text").value, "text/dns");
      if (!r.ok) { $("#zonefile-error").textContent = errorOf(r).message; invalidate(); return; }
      const lines = r.data.plan.concat(r.data.notes || []);
      showLines("zonefile", (dry ? "Plan: " : "Imported, version " + r.data.version + ": ") + r.data.plan.length + " change(s)", lines.length ? lines : ["no changes"]);
      planned = dry && r.data.plan.length > 0;
      importButton.disabled = !planned || !canWrite;
    }
    $("#zonefile-plan").addEventListener("click", () => run(true));
    importButton.addEventListener("click", () => { if (planned) run(false); });
  }
})();
