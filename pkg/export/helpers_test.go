package export

import (
	"strconv"

	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/percentile"
)

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func round2(x float64) float64 { return percentile.Round(x, 2) }

func pyFloat(x float64) string { return artifact.FormatFloat(x) }
