package chem

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The sanitiser's limits: an RDKit drawing of one small molecule is a few
// kilobytes and a few hundred elements.
const (
	maxSVGBytes    = 256 << 10
	maxSVGElements = 4000
	maxSVGDepth    = 16
)

const svgNS = "http://www.w3.org/2000/svg"

// svgElements are the drawing elements kept: shapes, text and groups.
// Everything else (script, foreignObject, a, use, image, style, defs,
// animate, set, metadata...) is dropped with its whole subtree.
var svgElements = map[string]bool{
	"g": true, "path": true, "rect": true, "circle": true, "ellipse": true, "line": true, "polyline": true,
	"polygon": true, "text": true, "tspan": true, "title": true, "desc": true,
}

// svgAttrs are the attributes kept, each as a presentation value (no
// namespace: no xlink:href, no xml:base, no rdkit:*); on* handlers, href,
// id and class are not among them.
var svgAttrs = map[string]bool{
	"d": true, "x": true, "y": true, "x1": true, "y1": true, "x2": true, "y2": true, "cx": true, "cy": true, "r": true,
	"rx": true, "ry": true, "width": true, "height": true, "points": true, "transform": true, "dx": true, "dy": true,
	"style": true,
}

// cssProps are the style properties kept (as attributes of the rebuilt
// element); their values may hold no parentheses, so no url(), no
// expression(), no var().
var cssProps = map[string]bool{
	"fill": true, "stroke": true, "stroke-width": true, "stroke-linecap": true, "stroke-linejoin": true,
	"stroke-dasharray": true, "stroke-opacity": true, "fill-opacity": true, "fill-rule": true, "opacity": true,
	"font-size": true, "font-family": true, "font-style": true, "font-weight": true, "text-anchor": true,
	"dominant-baseline": true,
}

var (
	plainValue     = regexp.MustCompile(`^[A-Za-z0-9 #.,%+\-]*$`)
	geometryValue  = regexp.MustCompile(`^[A-Za-z0-9 .,+\-]*$`)
	transformValue = regexp.MustCompile(`^((matrix|translate|scale|rotate|skewX|skewY)\([0-9eE .,+\-]*\)[ ,]*)*$`)
)

// Drawing is a sanitised structure drawing: the inner elements, rebuilt,
// and the size of the box they are drawn in.
type Drawing struct {
	Width, Height float64
	Inner         string
}

// SanitizeSVG rebuilds an untrusted SVG (the worker's drawing) from the
// allow-lists above: the root must be an svg element of the SVG namespace;
// its children's allowed elements are written again with their allowed
// attributes (a style's allowed declarations become attributes), their
// text escaped; comments, processing instructions and DOCTYPEs are
// dropped; an entity other than XML's own fails the parse. What comes out
// is well-formed and holds nothing that can run or fetch.
func SanitizeSVG(raw string) (*Drawing, error) {
	if len(raw) > maxSVGBytes {
		return nil, fmt.Errorf("the drawing is %d bytes, over %d", len(raw), maxSVGBytes)
	}
	d := xml.NewDecoder(strings.NewReader(raw))
	d.Strict = true
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		// RDKit declares iso-8859-1 and writes ASCII: any non-ASCII byte is
		// refused below rather than guessed at.
		switch strings.ToLower(label) {
		case "iso-8859-1", "latin1", "us-ascii", "ascii":
			return asciiOnly{in}, nil
		}
		return nil, fmt.Errorf("encoding %q is not accepted", label)
	}
	var out bytes.Buffer
	dw := &Drawing{}
	depth, elements, skipping := 0, 0, 0
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the drawing is not well-formed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			if elements > maxSVGElements {
				return nil, fmt.Errorf("the drawing has more than %d elements", maxSVGElements)
			}
			if skipping > 0 {
				skipping++
				continue
			}
			if !root {
				if t.Name.Local != "svg" || t.Name.Space != svgNS {
					return nil, fmt.Errorf("the drawing's root is <%s>, not an SVG <svg>", t.Name.Local)
				}
				root = true
				for _, a := range t.Attr {
					if a.Name.Space != "" {
						continue
					}
					switch a.Name.Local {
					case "width":
						dw.Width = number(a.Value)
					case "height":
						dw.Height = number(a.Value)
					}
				}
				depth = 1
				continue
			}
			if !svgElements[t.Name.Local] || t.Name.Space != svgNS || depth >= maxSVGDepth {
				skipping = 1
				continue
			}
			depth++
			out.WriteString("<" + t.Name.Local)
			writeAttrs(&out, t.Attr)
			out.WriteString(">")
		case xml.EndElement:
			if skipping > 0 {
				skipping--
				continue
			}
			depth--
			if depth == 0 {
				continue // the root's end
			}
			out.WriteString("</" + t.Name.Local + ">")
		case xml.CharData:
			if skipping == 0 && depth > 0 {
				if s := strings.TrimSpace(string(t)); s != "" {
					_ = xml.EscapeText(&out, []byte(s))
				}
			}
		}
	}
	if !root {
		return nil, fmt.Errorf("the drawing has no <svg> root")
	}
	if !(dw.Width > 0 && dw.Width <= 2000 && dw.Height > 0 && dw.Height <= 2000) {
		return nil, fmt.Errorf("the drawing's size %gx%g is not a structure's", dw.Width, dw.Height)
	}
	dw.Inner = out.String()
	return dw, nil
}

// writeAttrs writes the allowed attributes, and a style's allowed
// declarations as attributes, each value checked.
func writeAttrs(out *bytes.Buffer, attrs []xml.Attr) {
	kept := map[string]string{}
	var order []string
	keep := func(name, value string) {
		if _, dup := kept[name]; !dup {
			order = append(order, name)
		}
		kept[name] = value
	}
	for _, a := range attrs {
		name, v := a.Name.Local, strings.TrimSpace(a.Value)
		if a.Name.Space != "" || !svgAttrs[name] && !cssProps[name] {
			continue
		}
		switch {
		case name == "style":
			for _, decl := range strings.Split(v, ";") {
				k, val, ok := strings.Cut(decl, ":")
				k, val = strings.TrimSpace(strings.ToLower(k)), strings.TrimSpace(val)
				if ok && cssProps[k] && plainValue.MatchString(val) {
					keep(k, val)
				}
			}
		case name == "transform":
			if transformValue.MatchString(v) {
				keep(name, v)
			}
		case name == "d" || name == "points":
			if geometryValue.MatchString(v) {
				keep(name, v)
			}
		case plainValue.MatchString(v):
			keep(name, v)
		}
	}
	for _, k := range order {
		out.WriteString(" " + k + `="`)
		_ = xml.EscapeText(out, []byte(kept[k]))
		out.WriteString(`"`)
	}
}

// number reads a length such as "240px" (0 when it is none).
func number(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64)
	if err != nil {
		return 0
	}
	return v
}

// asciiOnly passes ASCII through and fails on any other byte.
type asciiOnly struct{ r io.Reader }

func (a asciiOnly) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	for _, b := range p[:n] {
		if b >= 0x80 {
			return 0, fmt.Errorf("a non-ASCII byte in a drawing declared %s", "iso-8859-1")
		}
	}
	return n, err
}

// Cell is one structure of the figure: its drawing and its legend lines
// (the compound's id and its activity, written by the server).
type Cell struct {
	Drawing *Drawing
	Legend  []string
}

// Grid lays cells out in rows of perRow, each structure a
// <g class="structure"> holding its drawing and legend, under a title.
func Grid(title string, cells []Cell, perRow int) string {
	const cw, dh, lh = 240.0, 190.0, 15.0
	legendLines := 2
	ch := dh + lh*float64(legendLines) + 10
	rows := (len(cells) + perRow - 1) / perRow
	cols := perRow
	if len(cells) < perRow {
		cols = len(cells)
	}
	if cols == 0 {
		cols = 1
	}
	w, h := cw*float64(cols), 30+ch*float64(rows)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="%s" version="1.1" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif">`, svgNS, w, h, w, h)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%g" height="%g" fill="#ffffff"/>`, w, h)
	b.WriteString(`<text x="8" y="20" font-size="14" font-weight="bold" fill="#222222">`)
	_ = xml.EscapeText(&b, []byte(title))
	b.WriteString(`</text>`)
	for i, c := range cells {
		x, y := cw*float64(i%perRow), 30+ch*float64(i/perRow)
		fmt.Fprintf(&b, `<g class="structure" transform="translate(%g,%g)">`, x, y)
		fmt.Fprintf(&b, `<rect x="2" y="2" width="%g" height="%g" fill="none" stroke="#dddddd"/>`, cw-4, ch-4)
		if c.Drawing != nil {
			sx, sy := cw/c.Drawing.Width, dh/c.Drawing.Height
			s := sx
			if sy < s {
				s = sy
			}
			fmt.Fprintf(&b, `<g class="drawing" transform="scale(%g)">%s</g>`, s, c.Drawing.Inner)
		}
		for j, line := range c.Legend {
			if j == legendLines {
				break
			}
			weight := "normal"
			if j == 0 {
				weight = "bold"
			}
			fmt.Fprintf(&b, `<text class="legend" x="%g" y="%g" font-size="12" text-anchor="middle" font-weight="%s" fill="#222222">`, cw/2, dh+lh*float64(j+1), weight)
			_ = xml.EscapeText(&b, []byte(line))
			b.WriteString(`</text>`)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
