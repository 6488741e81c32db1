package sandbox

import "github.com/lcptools/lcp/sandbox/internal/sbinit"

// The init's code and the configuration lcp hands it live in
// internal/sbinit, which imports only low-level packages so that the
// init can start before this package's heavy imports initialize (see the
// boot package). These names keep the sandbox's side of the contract
// readable.
type (
	initConfig   = sbinit.Config
	mountEntry   = sbinit.Mount
	egressConfig = sbinit.Egress
)

const (
	initEnv      = sbinit.Env
	mountBind    = sbinit.MountBind
	mountTmpfs   = sbinit.MountTmpfs
	mountProc    = sbinit.MountProc
	mountDev     = sbinit.MountDev
	mountOverlay = sbinit.MountOverlay
	mountSymlink = sbinit.MountSymlink
	mountRebind  = sbinit.MountRebind
)

// initLimits is the part of l the init sets on the command.
func initLimits(l Limits) sbinit.Limits {
	return sbinit.Limits{Memory: l.Memory, Processes: l.Processes, FileSize: l.FileSize,
		CPUTime: l.CPUTime, OpenFiles: l.OpenFiles, TmpSize: l.TmpSize}
}

// enterInit runs the init when this process was started as one.
func enterInit() { sbinit.Enter() }
