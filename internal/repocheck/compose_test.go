package repocheck

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// repoRoot is the repository root (two levels above this file).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// composeFile parses a Compose file with the yaml.v3 Node API, which keeps
// Compose's custom merge tags (!override, !reset) that plain decoding would
// refuse or drop.
func composeFile(t *testing.T, path string) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s is not a YAML mapping", path)
	}
	return doc.Content[0]
}

// get is the value of key in mapping m (nil: absent or m not a mapping).
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// service is one service after Compose's `extends` merge, for the keys
// this test reads: ports (a sequence, appended to the base's unless
// tagged !override or !reset) and environment (a mapping or a KEY=value
// sequence, merged key by key).
type service struct {
	ports []string
	env   map[string]string
}

func envOf(n *yaml.Node) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = n.Content[i+1].Value
		}
	case yaml.SequenceNode:
		for _, e := range n.Content {
			k, v, _ := strings.Cut(e.Value, "=")
			out[k] = v
		}
	}
	return out
}

// resolve reads service name of the Compose file at path, following
// `extends: {file, service}` as Compose merges it.
func resolve(t *testing.T, path, name string) service {
	t.Helper()
	svc := get(get(composeFile(t, path), "services"), name)
	if svc == nil {
		t.Fatalf("%s: no service %q", path, name)
	}
	var s service
	if ext := get(svc, "extends"); ext != nil {
		base := path
		if f := get(ext, "file"); f != nil {
			base = filepath.Join(filepath.Dir(path), f.Value)
		}
		baseName := name
		if n := get(ext, "service"); n != nil {
			baseName = n.Value
		}
		s = resolve(t, base, baseName)
	} else {
		s.env = map[string]string{}
	}
	if p := get(svc, "ports"); p != nil {
		if p.Tag == "!override" || p.Tag == "!reset" {
			s.ports = nil
		}
		for _, e := range p.Content {
			if e.Kind != yaml.ScalarNode {
				t.Fatalf("%s: service %s: a long-syntax port %v; this test reads the short syntax only", path, name, e)
			}
			s.ports = append(s.ports, e.Value)
		}
	}
	for k, v := range envOf(get(svc, "environment")) {
		s.env[k] = v
	}
	return s
}

// hostIP is the host address a short-syntax port publishes on ("" = every
// interface): [HOST:]HOST_PORT:CONTAINER_PORT[/PROTO] or a bare port.
func hostIP(port string) (ip, hostPort string) {
	p, _, _ := strings.Cut(port, "/")
	parts := strings.Split(p, ":")
	switch len(parts) {
	case 3:
		return parts[0], parts[1]
	case 2:
		return "", parts[0]
	}
	return "", parts[0] // a bare container port: a random host port on every interface
}

// The demo stack (docker-compose.yaml over the scaffold's
// .config/docker-compose-base.yaml) publishes nothing beyond the loopback,
// never the debugger port, and gives anonymous visitors the Viewer role:
// the scaffold's own defaults (anonymous Admin, 0.0.0.0, delve on 2345)
// are for a developer's machine only.
func TestDemoComposeBindsLoopback(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docker-compose.yaml")
	services := get(composeFile(t, path), "services")
	if services == nil || len(services.Content) == 0 {
		t.Fatal("docker-compose.yaml has no services")
	}
	published := 0
	for i := 0; i+1 < len(services.Content); i += 2 {
		name := services.Content[i].Value
		s := resolve(t, path, name)
		for _, p := range s.ports {
			published++
			ip, hostPort := hostIP(p)
			if ip != "127.0.0.1" {
				t.Errorf("service %s publishes %q on %s, want 127.0.0.1 only", name, p, orAll(ip))
			}
			if hostPort == "2345" || strings.Contains(p, ":2345") {
				t.Errorf("service %s publishes the debugger port: %q", name, p)
			}
		}
		if name == "grafana" {
			if role := s.env["GF_AUTH_ANONYMOUS_ORG_ROLE"]; role != "Viewer" {
				t.Errorf("grafana: GF_AUTH_ANONYMOUS_ORG_ROLE = %q, want Viewer (the scaffold's image sets Admin)", role)
			}
		}
	}
	if published == 0 {
		t.Error("no port published at all: the demo cannot be opened (the check would be empty)")
	}
}

func orAll(ip string) string {
	if ip == "" {
		return "every interface"
	}
	return ip
}
