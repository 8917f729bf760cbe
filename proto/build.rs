//! Compile the .proto files with protox (pure Rust: no system protoc), keep
//! the encoded descriptor set for gRPC reflection, and generate tonic code.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/gslb/v1/model.proto",
        "proto/gslb/v1/agent.proto",
        "proto/gslb/v1/edge.proto",
        "proto/gslb/v1/admin.proto",
        "proto/gslb/v1/raft.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let fds = protox::compile(files, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("gslb_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
