package demo

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cloudPackages are the import-path prefixes of the object-store drivers
// and the cloud SDKs behind them: blank-imported by the binaries' main
// packages only (design.md), never linked by the demo.
var cloudPackages = []string{
	"gocloud.dev/blob/s3blob",
	"gocloud.dev/blob/gcsblob",
	"gocloud.dev/blob/azureblob",
	"cloud.google.com/go/storage",
	"github.com/aws/aws-sdk-go",
	"github.com/Azure/azure-sdk-for-go",
}

// TestDemoClosureHasNoCloudSDK lists what the README's first command
// compiles — the Magefile (built with the mage tag, which imports
// internal/demo) and the demo package itself — and fails when a cloud
// storage driver or SDK enters it.
func TestDemoClosureHasNoCloudSDK(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	root := moduleRoot(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"internal/demo", []string{"./internal/demo"}},
		{"Magefile.go (mage tag)", []string{"-tags", "mage", "."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkgs := goList(t, root, tc.args...)
			if len(pkgs) < 50 {
				t.Fatalf("go list -deps %v gave %d packages: not the demo's closure", tc.args, len(pkgs))
			}
			var bad []string
			for _, p := range pkgs {
				for _, c := range cloudPackages {
					if strings.HasPrefix(p, c) { // aws-sdk-go also covers aws-sdk-go-v2
						bad = append(bad, p)
						break
					}
				}
			}
			if len(bad) > 0 {
				t.Errorf("%s links %d cloud-SDK packages (the drivers belong in the binaries' main packages only), e.g. %v", tc.name, len(bad), bad[:min(len(bad), 5)])
			}
			t.Logf("%s: %d packages", tc.name, len(pkgs))
		})
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-deps"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", args, err, stderr.String())
	}
	return strings.Fields(string(out))
}
