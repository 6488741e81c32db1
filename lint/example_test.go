package lint_test

import (
	"fmt"
	"os"

	"github.com/lcptools/lcp/lint"
)

func Example() {
	src := []byte(`
def tool_connect(api_key: str):
    """Connects to the weather service with the user's API key.

    Args:
        api_key (str): The key.
    """
    return {"success": True, "output": f"Connected with {api_key}"}
`)
	findings := lint.Check("weather.py", src, nil)
	for _, f := range findings {
		fmt.Println(f)
	}
	if lint.Fails(findings, lint.Error) {
		fmt.Println("fix the errors first")
	}
	// Output:
	// weather.py:8:40: error: tool_connect puts a secret into its result under 'output', which the model reads [secret-leak]
	// fix the errors first
}

func ExampleWriteSARIF() {
	findings := []lint.Finding{{Severity: lint.Warning, Code: "vague-description", File: "tools/x.py", Line: 3, Column: 5,
		Message: "tool_x's description 'Adds.' is 1 word(s)"}}
	// Paths in the log are relative to the checked folder.
	if err := lint.WriteSARIF(os.Stdout, findings, lint.SARIFOptions{Root: "tools"}); err != nil {
		fmt.Println(err)
	}
}

func ExampleLookupRule() {
	r, _ := lint.LookupRule("path-escape")
	fmt.Println(r.Severity, "-", r.Fix)
	// Output:
	// warning - resolve the path and check it is inside the workspace (Path(p).resolve().is_relative_to(Path.cwd().resolve()), relative_to or os.path.commonpath) and refuse it otherwise
}
