//go:build unix

package worker

// supported says why workers cannot run here: nil, they can.
func supported() error { return nil }
