//go:build !unix

package worker

import "errors"

// supported says why workers cannot run here.
func supported() error { return errors.New("python workers need a Unix system") }
