package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText bounds the text a call may carry (in bytes), so one call cannot
// hold the server's memory.
const maxText = 1 << 20

// Stats are a text's counts. Every count is over Unicode text: characters
// are code points, words are runs of letters, digits and marks (an
// apostrophe or hyphen between two of them joins a word: "don't",
// "well-known"), compared case-folded for unique_words.
type Stats struct {
	Characters     int     `json:"characters" jsonschema:"Unicode code points"`
	Bytes          int     `json:"bytes" jsonschema:"UTF-8 bytes"`
	Letters        int     `json:"letters" jsonschema:"letters (Unicode category L)"`
	Words          int     `json:"words" jsonschema:"words"`
	UniqueWords    int     `json:"unique_words" jsonschema:"distinct words, case-folded"`
	Lines          int     `json:"lines" jsonschema:"lines (a final line without a newline counts)"`
	Sentences      int     `json:"sentences" jsonschema:"runs of words ended by . ! or ? (or by the end of the text)"`
	Paragraphs     int     `json:"paragraphs" jsonschema:"blocks of non-blank lines"`
	MeanWordLength float64 `json:"mean_word_length" jsonschema:"mean word length in code points, rounded to 2 decimals; 0 for no words"`
	LongestWord    string  `json:"longest_word" jsonschema:"the longest word (the first of equals); empty for no words"`
}

// WordCount is one word and how often it occurs.
type WordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// words splits text into words as Stats defines them.
func words(text string) []string {
	var out []string
	var cur strings.Builder
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case wordRune(r):
			cur.WriteRune(r)
		case (r == '\'' || r == '’' || r == '-') && cur.Len() > 0 && i+1 < len(rs) && wordRune(rs[i+1]):
			cur.WriteRune(r)
		default:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) }

// TextStats counts text.
func TextStats(text string) Stats {
	s := Stats{Characters: utf8.RuneCountInString(text), Bytes: len(text)}
	for _, r := range text {
		if unicode.IsLetter(r) {
			s.Letters++
		}
	}
	ws := words(text)
	s.Words = len(ws)
	seen := map[string]bool{}
	total := 0
	for _, w := range ws {
		seen[fold(w)] = true
		n := utf8.RuneCountInString(w)
		total += n
		if n > utf8.RuneCountInString(s.LongestWord) {
			s.LongestWord = w
		}
	}
	s.UniqueWords = len(seen)
	if s.Words > 0 {
		s.MeanWordLength = float64(int(float64(total)/float64(s.Words)*100+0.5)) / 100
	}
	s.Lines = strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		s.Lines++
	}
	s.Sentences = sentences(text)
	s.Paragraphs = paragraphs(text)
	return s
}

// sentences counts runs of text holding a word and ended by terminal
// punctuation ("..." and "?!" end one sentence), or by the end of the text.
func sentences(text string) int {
	n := 0
	hasWord := false
	for _, r := range text {
		switch {
		case r == '.' || r == '!' || r == '?' || r == '…':
			if hasWord {
				n++
				hasWord = false
			}
		case wordRune(r):
			hasWord = true
		}
	}
	if hasWord {
		n++
	}
	return n
}

func paragraphs(text string) int {
	n := 0
	in := false
	for _, line := range strings.Split(text, "\n") {
		blank := strings.TrimSpace(line) == ""
		if !blank && !in {
			n++
		}
		in = !blank
	}
	return n
}

// fold is the case-folded form words are compared in.
func fold(w string) string { return strings.ToLower(strings.ReplaceAll(w, "’", "'")) }

// stopwords are common English function words, left out of TopWords when
// asked.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from had has have he her his i if in
		into is it its me my no not of on or our she so than that the their them then there these they
		this to was we were what when which who will with you your`) {
		stopwords[w] = true
	}
}

// TopWordsOptions shape a TopWords call.
type TopWordsOptions struct {
	N             int
	MinLength     int
	SkipStopwords bool
}

// TopWords returns the n most frequent case-folded words, most frequent
// first and alphabetically among equals, and the number of words counted.
func TopWords(text string, o TopWordsOptions) ([]WordCount, int) {
	counts := map[string]int{}
	total := 0
	for _, w := range words(text) {
		w = fold(w)
		if utf8.RuneCountInString(w) < o.MinLength || (o.SkipStopwords && stopwords[w]) {
			continue
		}
		counts[w]++
		total++
	}
	out := make([]WordCount, 0, len(counts))
	for w, c := range counts {
		out = append(out, WordCount{Word: w, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Word < out[j].Word
	})
	if len(out) > o.N {
		out = out[:o.N]
	}
	return out, total
}

// checkText refuses a text too large to count.
func checkText(text string) error {
	if len(text) > maxText {
		return fmt.Errorf("text is %d bytes; at most %d are counted in one call", len(text), maxText)
	}
	return nil
}
