//go:build mage
// +build mage

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/magefile/mage/sh"
)

// toolModules are the nested modules under tools/, each checked on its own.
var toolModules = []string{"tools/kube", "tools/thanos", "tools/tsdbgen"}

// Security runs what Grafana's plugin validator runs, so every landing is
// checked: gosec over the whole tree (tools/ and internal/ included;
// findings are fixed or annotated `// #nosec Gxxx -- reason`; G104 is
// errcheck's), govulncheck against the offline vulnerability database in
// the main module (any reachable advisory fails) and in each tools/ module
// (tools/tsdbgen: only the advisories of its Prometheus pin listed in
// tools/tsdbgen/govulncheck-allow.txt pass), and golangci-lint and gofmt on
// tools/. The database is $VULNDB, else ../shared/vulndb beside the clone, else
// govulncheck's online default.
func Security() error {
	if out, err := sh.Output("gofmt", "-l", "tools", "magefile_security.go"); err != nil || out != "" {
		return fmt.Errorf("gofmt would change (or failed: %v):\n%s", err, out)
	}
	for _, dir := range toolModules {
		if err := runIn(dir, golangciLint(), "run", "--timeout", "10m", "--config", mustAbs(".golangci.yml"), "./..."); err != nil {
			return fmt.Errorf("golangci-lint in %s: %w", dir, err)
		}
	}
	if err := sh.RunV(goTool("gosec"), "-quiet", "-exclude=G104", "./..."); err != nil {
		return fmt.Errorf("gosec: %w", err)
	}
	db, err := vulnDB()
	if err != nil {
		return err
	}
	if err := sh.RunV(goTool("govulncheck"), "-db", db, "./..."); err != nil {
		return fmt.Errorf("govulncheck in the main module: %w", err)
	}
	for _, dir := range toolModules {
		allow, err := readAllowList(filepath.Join(dir, "govulncheck-allow.txt"))
		if err != nil {
			return err
		}
		if err := vulncheckAllowing(dir, db, allow); err != nil {
			return fmt.Errorf("govulncheck in %s: %w", dir, err)
		}
	}
	return nil
}

// goTool finds a command scripts/setup.sh installs with go install.
func goTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	gopath, _ := sh.Output("go", "env", "GOPATH")
	return filepath.Join(gopath, "bin", name)
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// vulnDB is the file:// URL of the offline database ($VULNDB, else
// ../shared/vulndb beside the clone).
func vulnDB() (string, error) {
	dir := os.Getenv("VULNDB")
	named := dir != ""
	if !named {
		dir = filepath.Join("..", "shared", "vulndb")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "index", "db.json")); err != nil {
		if !named {
			// A clone without the offline copy beside it: govulncheck's own
			// database (it needs the network).
			fmt.Printf("security: no offline vulnerability database at %s; using govulncheck's default (set VULNDB to use a copy)\n", abs)
			return "https://vuln.go.dev", nil
		}
		return "", fmt.Errorf("no offline vulnerability database at %s (VULNDB): %w", abs, err)
	}
	return "file://" + abs, nil
}

// runIn runs a command in dir with the output passed through.
func runIn(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	return cmd.Run()
}

// readAllowList reads one OSV id per line ('#' comments); a missing file is
// an empty list.
func readAllowList(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	allow := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			allow[line] = true
		}
	}
	return allow, nil
}

// vulncheckAllowing runs govulncheck in dir (JSON) and fails on a reachable
// advisory (a finding whose trace starts at a function) not in allow; it
// also fails when an allowed id is no longer found, so the list shrinks.
func vulncheckAllowing(dir, db string, allow map[string]bool) error {
	cmd := exec.Command(goTool("govulncheck"), "-db", db, "-format", "json", "./...")
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	found, perr := reachableIDs(out)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return err
	}
	if perr != nil {
		return fmt.Errorf("reading govulncheck's output: %w", perr)
	}
	var bad, accepted, stale []string
	for id := range found {
		if allow[id] {
			accepted = append(accepted, id)
		} else {
			bad = append(bad, id)
		}
	}
	for id := range allow {
		if !found[id] {
			stale = append(stale, id)
		}
	}
	sort.Strings(bad)
	sort.Strings(accepted)
	sort.Strings(stale)
	if len(accepted) > 0 {
		fmt.Printf("govulncheck %s: reachable but accepted (govulncheck-allow.txt): %s\n", dir, strings.Join(accepted, ", "))
	}
	switch {
	case len(bad) > 0:
		return fmt.Errorf("reachable vulnerabilities %s (run govulncheck -db %s ./... in %s for the traces)", strings.Join(bad, ", "), db, dir)
	case len(stale) > 0:
		return fmt.Errorf("govulncheck-allow.txt lists %s, no longer found: remove them", strings.Join(stale, ", "))
	}
	fmt.Printf("govulncheck %s: no other reachable vulnerabilities\n", dir)
	return nil
}

// reachableIDs reads govulncheck's JSON stream: the OSV ids of findings at
// symbol level (trace[0] names a function).
func reachableIDs(r io.Reader) (map[string]bool, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	ids := map[string]bool{}
	for {
		var msg struct {
			Finding *struct {
				OSV   string `json:"osv"`
				Trace []struct {
					Function string `json:"function"`
				} `json:"trace"`
			} `json:"finding"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return ids, nil
		} else if err != nil {
			return ids, err
		}
		if f := msg.Finding; f != nil && len(f.Trace) > 0 && f.Trace[0].Function != "" {
			ids[f.OSV] = true
		}
	}
}
