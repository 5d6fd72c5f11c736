package pk

import "github.com/scidex/substrate/internal/svgplot"

// The axes and number formats are the shared plotting package's
// (internal/svgplot), which figure.generate draws with too.
var (
	linearTicks = svgplot.LinearTicks
	logTicks    = svgplot.LogTicks
	num         = svgplot.Num
	coord       = svgplot.Coord
	esc         = svgplot.Esc
)
