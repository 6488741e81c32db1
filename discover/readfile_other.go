//go:build !(linux || darwin)

package discover

// readFile reads the file at path as os.ReadFile does, into *buf (grown
// as needed).
func readFile(path string, buf *[]byte) ([]byte, error) { return readFileOS(path, buf) }
