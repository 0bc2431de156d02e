package export

import (
	"fmt"
	"path/filepath"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/report"
)

// writeReport writes report.html next to server_summary.json from the
// export's own result, its PSI bands, its notices and its other rows
// (gates, phases, ladder). A report that cannot
// be rendered or written is a notice (export.md), never a failed export:
// the artifacts it describes are already written.
func writeReport(env Env, out *Outcome, md artifact.ServerMetadata, psi *artifact.PSISeries, res *harvest.Result, notices []artifact.Notice, rows []artifact.Row) {
	in := report.Input{
		Run:         report.Run{Meta: md, Result: res},
		PSI:         psi,
		Source:      md.PromURL,
		HarvestedAt: env.Now(),
		Notices:     notices,
	}
	if out.TrialWritten {
		in.Trial = out.Trial
	}
	for _, r := range rows {
		if r.Metric != artifact.MetricServerSummary && r.Metric != artifact.MetricTrialSummary {
			in.Rows = append(in.Rows, r)
		}
	}
	page, err := report.Render(in)
	if err == nil {
		path := filepath.Join(out.Dir, report.FileName)
		if err = artifact.WriteFileAtomic(path, page, 0o644); err == nil {
			out.Report = path
			fmt.Fprintf(env.Stdout, "wrote %s (%d bytes)\n", path, len(page))
			return
		}
	}
	fmt.Fprintf(env.Stdout, "notice: %s not written: %v\n", report.FileName, err)
}
