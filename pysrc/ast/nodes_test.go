package ast

import "testing"

func TestImportBinding(t *testing.T) {
	for _, tc := range []struct {
		name, as      string
		local, module string
	}{
		{"os", "", "os", "os"},
		{"os.path", "", "os", "os"},
		{"numpy", "np", "np", "numpy"},
		{"xml.etree.ElementTree", "ET", "ET", "xml.etree.ElementTree"},
	} {
		a := &Alias{Name: tc.name, AsName: tc.as}
		if local, module := a.ImportBinding(); local != tc.local || module != tc.module {
			t.Errorf("import %s as %q: binds %q to %q, want %q to %q", tc.name, tc.as, local, module, tc.local, tc.module)
		}
	}
}
