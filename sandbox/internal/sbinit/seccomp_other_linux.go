//go:build linux && !amd64 && !arm64

package sbinit

// nativeArch is nil: the seccomp filter has tables for x86_64 and aarch64
// only, and runs elsewhere go without it (with a warning).
var nativeArch *sysArch
