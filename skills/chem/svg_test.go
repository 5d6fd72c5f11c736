package chem

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// A hostile drawing keeps its lines and text and loses everything that
// could run, fetch or navigate.
func TestSanitizeSVGKeepsTheDrawingOnly(t *testing.T) {
	raw := `<?xml version='1.0' encoding='iso-8859-1'?>
<!DOCTYPE svg [<!ENTITY ok "fine">]>
<svg version='1.1' xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' xmlns:rdkit='http://www.rdkit.org/xml' width='240px' height='190px' viewBox='0 0 240 190' onload='alert(1)'>
<!-- a comment -->
<script>alert("x")</script>
<foreignObject width='10' height='10'><body xmlns='http://www.w3.org/1999/xhtml'><iframe src='https://evil'/></body></foreignObject>
<style>path { fill: url(https://evil/x) }</style>
<a xlink:href='javascript:alert(1)'><path d='M 0,0 L 1,1'/></a>
<use xlink:href='#x' href='#x'/>
<image href='https://evil/pixel.png' width='1' height='1'/>
<path d='M 16.6,108.1 L 22.7,101.4' style='fill:none;stroke:#000000;stroke-width:2.0px;background:url(https://evil)' onclick='steal()' class='bond-0' rdkit:x='1' />
<path d='M 1,1 L 2,2' fill='url(#grad)' stroke='#FF0000' />
<text x='29.7' y='95.5' style='font-size:9px;fill:#FF0000;font-family:sans-serif' onmouseover='x()'>O&lt;b&gt;</text>
<g transform='translate(1,2) scale(2)'><animate attributeName='href' to='javascript:alert(1)'/><set attributeName='onclick' to='x()'/><circle cx='1' cy='2' r='3'/></g>
<g transform='url(javascript:x)'><rect x='0' y='0' width='1' height='1' style='fill:expression(alert(1))'/></g>
<rdkit:mol><rdkit:atom/></rdkit:mol>
</svg>`
	d, err := SanitizeSVG(raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.Width != 240 || d.Height != 190 {
		t.Errorf("size %gx%g", d.Width, d.Height)
	}
	low := strings.ToLower(d.Inner)
	for _, bad := range []string{"script", "foreignobject", "iframe", "href", "javascript", "url(", "onload", "onclick",
		"onmouseover", "style", "animate", "<set", "image", "<use", "<a", "expression", "rdkit", "evil", "class", "<!--", "doctype", "entity"} {
		if strings.Contains(low, bad) {
			t.Errorf("%q survived: %s", bad, d.Inner)
		}
	}
	for _, good := range []string{`<path d="M 16.6,108.1 L 22.7,101.4" fill="none" stroke="#000000" stroke-width="2.0px"></path>`,
		`<path d="M 1,1 L 2,2" stroke="#FF0000"></path>`, `O&lt;b&gt;</text>`, `<g transform="translate(1,2) scale(2)"><circle cx="1" cy="2" r="3"></circle></g>`,
		`font-size="9px"`} {
		if !strings.Contains(d.Inner, good) {
			t.Errorf("%q lost: %s", good, d.Inner)
		}
	}
	// What comes out parses again, inside the figure.
	fig := Grid("t", []Cell{{Drawing: d, Legend: []string{"id <1>", "IC50 5 nM"}}}, 5)
	dec := xml.NewDecoder(strings.NewReader(fig))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the figure is not well-formed: %v\n%s", err, fig)
		}
	}
	if !strings.Contains(fig, "id &lt;1&gt;") || strings.Count(fig, `class="structure"`) != 1 {
		t.Errorf("figure: %s", fig)
	}
}

func TestSanitizeSVGRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"html root":     `<html><svg xmlns="http://www.w3.org/2000/svg"/></html>`,
		"no namespace":  `<svg width="10" height="10"></svg>`,
		"entity":        `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text></svg>`,
		"broken":        `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><path>`,
		"utf-7":         `<?xml version="1.0" encoding="utf-7"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`,
		"huge size":     `<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="10"/>`,
		"too big":       `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">` + strings.Repeat("<g></g>", maxSVGElements) + `</svg>`,
		"latin-1 bytes": "<?xml version='1.0' encoding='iso-8859-1'?><svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><text>\xe9</text></svg>",
	} {
		if d, err := SanitizeSVG(raw); err == nil {
			t.Errorf("%s: accepted: %+v", name, d)
		}
	}
}
