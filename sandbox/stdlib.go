package sandbox

import "slices"

// StdlibModule reports whether name is a public top-level module of
// Python's standard library (sys.stdlib_module_names of 3.11): a file or
// package of that name in a folder on sys.path shadows it.
func StdlibModule(name string) bool {
	_, found := slices.BinarySearch(stdlibNames, name)
	return found
}
