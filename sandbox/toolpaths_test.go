package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// credentialStores are folders and files of a home that hold secrets:
// no tool path may show them.
var credentialStores = []string{
	".local/share/uv/credentials", ".ssh", ".aws", ".gnupg", ".docker/config.json",
	".config/gh", ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".cargo/credentials.toml",
	".cargo/credentials", ".kube", ".config/gcloud",
}

func TestToolPathsHideCredentials(t *testing.T) {
	home := t.TempDir()
	for _, p := range toolPaths {
		if err := os.MkdirAll(filepath.Join(home, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range credentialStores {
		writeTestFile(t, filepath.Join(home, c, "secret"), "token")
	}
	shown := ToolPaths(home)
	for _, want := range []string{".local/share/uv/python", ".local/share/uv/tools", ".pyenv", ".cargo/bin"} {
		if !slices.Contains(shown, filepath.Join(home, want)) {
			t.Errorf("%s is not shown", want)
		}
	}
	for _, c := range credentialStores {
		secret := filepath.Join(home, c, "secret")
		for _, s := range shown {
			if pathWithin(secret, s) {
				t.Errorf("%s is shown through %s", c, strings.TrimPrefix(s, home+"/"))
			}
		}
	}
}
