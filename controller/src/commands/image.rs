//! `deskenv image build|list|verify`.

use super::open_image;
use crate::cli::ImageCmd;
use crate::exit::Exit;
use controller::image::{self, BuildOptions, Image};
use controller::paths;
use std::path::Path;

pub fn command(cache: &Path, c: ImageCmd) -> anyhow::Result<Exit> {
    match c {
        ImageCmd::Build {
            recipe,
            mirror,
            suite,
            agent,
            force,
        } => {
            let opts = BuildOptions {
                mirror,
                suite,
                agent,
                out: None,
                force,
            };
            let built = image::build(&recipe, cache, &opts)?;
            println!(
                "{} {} in {:.1}s ({} MiB)",
                if built.cached { "cached" } else { "built" },
                built.image.dir.display(),
                built.seconds,
                built.image.manifest.files.image.bytes.unwrap_or(0) / 1_048_576
            );
        }
        ImageCmd::List => list(cache),
        ImageCmd::Verify { image } => {
            let img = open_image(cache, &image)?;
            img.verify()?;
            println!("{}: checksums match the manifest", img.dir.display());
        }
    }
    Ok(Exit::Ok)
}

fn list(cache: &Path) {
    let root = paths::images_dir(cache);
    let mut any = false;
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        any = true;
        match Image::open(&e.path()) {
            Ok(i) => println!(
                "{}  built {}  kernel {}  {} packages  {} MiB",
                i.dir.display(),
                i.manifest.built_at,
                i.manifest.kernel_version,
                i.manifest.packages.len(),
                i.manifest.files.image.bytes.unwrap_or(0) / 1_048_576
            ),
            Err(err) => println!("{}  unusable: {err}", e.path().display()),
        }
    }
    if !any {
        println!("no images under {} (deskenv image build)", root.display());
    }
}
