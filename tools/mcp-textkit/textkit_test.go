package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"Hello, world!", []string{"Hello", "world"}},
		{"don't stop — well-known 'quoted' -dash- end-", []string{"don't", "stop", "well-known", "quoted", "dash", "end"}},
		{"l’été 2026: naïve café", []string{"l’été", "2026", "naïve", "café"}},
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
	} {
		if got := words(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("words(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestTextStats(t *testing.T) {
	for _, c := range []struct {
		text string
		want Stats
	}{
		{"", Stats{}},
		{"One.", Stats{Characters: 4, Bytes: 4, Letters: 3, Words: 1, UniqueWords: 1, Lines: 1, Sentences: 1, Paragraphs: 1, MeanWordLength: 3, LongestWord: "One"}},
		{"The cat sat. The cat ran!\n\nWhy? Because...\nno end",
			Stats{Characters: 49, Bytes: 49, Letters: 33, Words: 10, UniqueWords: 8, Lines: 4, Sentences: 5, Paragraphs: 2, MeanWordLength: 3.3, LongestWord: "Because"}},
		{"café\n", Stats{Characters: 5, Bytes: 6, Letters: 4, Words: 1, UniqueWords: 1, Lines: 1, Sentences: 1, Paragraphs: 1, MeanWordLength: 4, LongestWord: "café"}},
	} {
		if got := TextStats(c.text); got != c.want {
			t.Errorf("TextStats(%q) =\n %+v, want\n %+v", c.text, got, c.want)
		}
	}
}

func TestTopWords(t *testing.T) {
	text := "The cat and the dog. The DOG barked; a cat sat. Zebra!"
	got, total := TopWords(text, TopWordsOptions{N: 3, MinLength: 1})
	want := []WordCount{{"the", 3}, {"cat", 2}, {"dog", 2}}
	if !reflect.DeepEqual(got, want) || total != 12 {
		t.Errorf("TopWords = %v (%d words), want %v (12)", got, total, want)
	}
	got, total = TopWords(text, TopWordsOptions{N: 10, MinLength: 4, SkipStopwords: true})
	want = []WordCount{{"barked", 1}, {"zebra", 1}}
	if !reflect.DeepEqual(got, want) || total != 2 {
		t.Errorf("TopWords(min 4, no stopwords) = %v (%d words), want %v (2)", got, total, want)
	}
}

func TestCheckText(t *testing.T) {
	if err := checkText(strings.Repeat("a", maxText)); err != nil {
		t.Errorf("a text of exactly the limit was refused: %v", err)
	}
	if err := checkText(strings.Repeat("a", maxText+1)); err == nil || !strings.Contains(err.Error(), "at most 1048576") {
		t.Errorf("an over-long text: %v", err)
	}
}
