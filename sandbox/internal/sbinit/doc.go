// Package sbinit is the sandbox's init: PID 1 of a sandboxed command's
// namespaces, the binary that links the sandbox started again through
// /proc/self/exe. It builds the root (mounts, overlay), brings the
// loopback up, drops every privilege, restricts Landlock, installs the
// seccomp filter, starts the command with its limits and supervises it.
//
// It imports only low-level packages of the standard library and
// golang.org/x/sys/unix, so that Go initializes it (and the boot package
// above it) before the binary's heavy packages: a process started as the
// init runs it from the boot package's initializer and exits, without
// paying for the initializers of everything else the binary links. Its
// configuration types are shared with the sandbox package, which writes
// them.
package sbinit
