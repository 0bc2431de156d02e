package objstoretest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"
)

// tree writes runs/t/run_date=2024-03-1{2,3}/x and runs/t/acks.yaml: two
// "directories" and one object under runs/t/.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, rel := range []string{"runs/t/run_date=2024-03-12/x", "runs/t/run_date=2024-03-13/x", "runs/t/acks.yaml"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Through either proxy a delimited listing of one entry a page takes three
// pages, each entry once, in name order, with one list request per page;
// and a copied object reads back.
func TestPagedListing(t *testing.T) {
	ctx := context.Background()
	g, s := StartGCS(t), StartS3(t)
	for _, c := range []struct {
		name string
		url  string
		log  *Log
	}{{"gcs", g.Bucket(t, tree(t)), g.Log}, {"s3", s.Bucket(t, tree(t)), s.Log}} {
		t.Run(c.name, func(t *testing.T) {
			b, err := blob.OpenBucket(ctx, c.url)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			c.log.Take()
			var got []string
			pages := 0
			for tok := blob.FirstPageToken; ; {
				var objs []*blob.ListObject
				objs, tok, err = b.ListPage(ctx, tok, 1, &blob.ListOptions{Prefix: "runs/t/", Delimiter: "/"})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, o := range objs {
					got = append(got, o.Key)
				}
				if len(tok) == 0 || pages > 10 {
					break
				}
			}
			want := "runs/t/acks.yaml runs/t/run_date=2024-03-12/ runs/t/run_date=2024-03-13/"
			if strings.Join(got, " ") != want || pages != 3 {
				t.Errorf("%d pages of %v, want 3 pages of %s", pages, got, want)
			}
			if total, _, lists := c.log.Take(); total != 3 || lists["runs/t/"] != 3 {
				t.Errorf("%d requests, lists %v; want 3 list requests of runs/t/", total, lists)
			}
			if v, err := b.ReadAll(ctx, "runs/t/acks.yaml"); err != nil || string(v) != "runs/t/acks.yaml" {
				t.Errorf("read back %q, %v", v, err)
			}
			if total, byPath, _ := c.log.Take(); total != 1 {
				t.Errorf("reading one object: %d requests %v", total, byPath)
			}
		})
	}
}

// Why the GCS proxy pages delimited listings itself: fake-gcs-server
// answers maxResults=1 over two prefixes and an object with the object
// and both prefixes, and no page token; through the proxy, as GCS does,
// one page holds one entry.
func TestGCSPrefixPaging(t *testing.T) {
	g := StartGCS(t)
	bucket := strings.TrimPrefix(g.Bucket(t, tree(t)), "gs://")
	list := func(base string) (n int, token string) {
		t.Helper()
		q := url.Values{"prefix": {"runs/t/"}, "delimiter": {"/"}, "maxResults": {"1"}}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, base+"/storage/v1/b/"+bucket+"/o?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Items         []json.RawMessage `json:"items"`
			Prefixes      []string          `json:"prefixes"`
			NextPageToken string            `json:"nextPageToken"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return len(body.Items) + len(body.Prefixes), body.NextPageToken
	}
	if n, tok := list(g.Server.URL()); n != 3 || tok != "" {
		t.Errorf("fake-gcs-server: %d entries, token %q; want 3 and no token (if it pages prefixes now, the proxy need not)", n, tok)
	}
	if n, tok := list(g.ProxyURL); n != 1 || tok == "" {
		t.Errorf("through the proxy: %d entries, token %q; want 1 and a token", n, tok)
	}
}
