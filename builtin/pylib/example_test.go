package pylib_test

import (
	"fmt"
	"os"

	"github.com/lcptools/lcp/builtin/pylib"
	"github.com/lcptools/lcp/discover"
)

func ExampleExtractTo() {
	cache, _ := os.MkdirTemp("", "cache")
	defer os.RemoveAll(cache)
	dir, err := pylib.ExtractTo(cache)
	if err != nil {
		panic(err)
	}
	for _, t := range discover.Run(discover.Options{Folders: []string{dir}}).Tools {
		fmt.Println(t.Name)
	}
	// Output:
	// tool_prepare_deployment
	// tool_configure_service_connection
	// tool_test_service_connection
}
