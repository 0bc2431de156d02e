package simrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLadderScenario(t *testing.T) {
	sc := LadderSteps()
	dir := t.TempDir()
	tr, err := Generate(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	lt := tr.Ladder
	if lt == nil || len(lt.Rows) != 3 || len(lt.Skipped) != 2 || lt.Skipped[0] != 3 || lt.Skipped[1] != 5 {
		t.Fatalf("ladder truth %+v", lt)
	}
	for _, r := range lt.Rows {
		var b strings.Builder
		for _, kv := range r.Values {
			v := "null"
			if kv.Value != nil {
				v = *kv.Value
			}
			b.WriteString(kv.Key + "=" + v + " ")
		}
		t.Logf("%s %s", r.Metric, b.String())
	}
	var sb strings.Builder
	for _, kv := range lt.Summary {
		v := "null"
		if kv.Value != nil {
			v = *kv.Value
		}
		sb.WriteString(kv.Key + "=" + v + " ")
	}
	t.Logf("summary %s", sb.String())
	get := func(kvs []KV, k string) string {
		for _, kv := range kvs {
			if kv.Key == k && kv.Value != nil {
				return *kv.Value
			}
		}
		return "null"
	}
	if get(lt.Summary, "knee_step") != "2" || get(lt.Summary, "first_short_step") != "4" {
		t.Errorf("summary %+v", lt.Summary)
	}
	if get(lt.Rows[2].Values, "failures_get_actor_status") == "null" || get(lt.Rows[0].Values, "failures_get_actor_status") != "null" {
		t.Errorf("GetActorStatus failures should appear in step 4 only")
	}
	log, err := os.ReadFile(filepath.Join(dir, LogsFile))
	if err != nil || !strings.Contains(string(log), "Ladder step 5/5: users=50 trace_probability=unchanged target_rps=unchanged") || strings.Contains(string(log), "Ladder complete") {
		t.Errorf("logs.txt:\n%s", log)
	}
}
