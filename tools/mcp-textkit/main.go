// Command mcp-textkit is a small MCP server with two deterministic text
// tools, text_stats and top_words, shipped as the substrate's example of an
// mcp_server tool. It speaks MCP on stdin and stdout (how an operator's
// servers file starts it), or streamable HTTP with --http ADDR.
//
//	mcp-textkit                 # stdio
//	mcp-textkit --http :8765    # streamable HTTP at http://HOST:8765/mcp
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is the server's version, reported in the MCP handshake.
const version = "1.0.0"

func main() {
	addr := flag.String("http", "", "serve streamable HTTP at `ADDR` (path /mcp) instead of stdio")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatalf("mcp-textkit: %v", err)
	}
}

func run(ctx context.Context, addr string) error {
	if addr == "" {
		err := newServer().Run(ctx, &mcp.StdioTransport{})
		if errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil
		}
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler())
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("mcp-textkit: streamable HTTP on %s/mcp", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler serves the tools over streamable HTTP.
func handler() http.Handler {
	srv := newServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// TextStatsIn is text_stats' input.
type TextStatsIn struct {
	Text string `json:"text" jsonschema:"the text to count (at most 1 MiB)"`
}

// TopWordsIn is top_words' input.
type TopWordsIn struct {
	Text          string `json:"text" jsonschema:"the text to count (at most 1 MiB)"`
	N             int    `json:"n,omitempty" jsonschema:"how many words to return, 1 to 1000 (default 10)"`
	MinLength     int    `json:"min_length,omitempty" jsonschema:"leave out words shorter than this many characters (default 1)"`
	SkipStopwords bool   `json:"skip_stopwords,omitempty" jsonschema:"leave out common English function words (the, and, of, ...)"`
}

// TopWordsOut is top_words' output.
type TopWordsOut struct {
	Words      []WordCount `json:"words" jsonschema:"the most frequent words, most frequent first, alphabetical among equals"`
	TotalWords int         `json:"total_words" jsonschema:"how many words were counted (after min_length and skip_stopwords)"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcp-textkit", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "text_stats",
		Description: "Count a text: characters, bytes, letters, words, unique words, lines, sentences, paragraphs, mean word length and the longest word.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in TextStatsIn) (*mcp.CallToolResult, Stats, error) {
		if err := checkText(in.Text); err != nil {
			return nil, Stats{}, err
		}
		return nil, TextStats(in.Text), nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "top_words",
		Description: "The most frequent words of a text, case-folded, with their counts.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in TopWordsIn) (*mcp.CallToolResult, TopWordsOut, error) {
		if err := checkText(in.Text); err != nil {
			return nil, TopWordsOut{}, err
		}
		if in.N == 0 {
			in.N = 10
		}
		if in.N < 1 || in.N > 1000 {
			return nil, TopWordsOut{}, fmt.Errorf("n is %d; want 1 to 1000", in.N)
		}
		if in.MinLength < 0 {
			return nil, TopWordsOut{}, fmt.Errorf("min_length is %d; want 0 or more", in.MinLength)
		}
		ws, total := TopWords(in.Text, TopWordsOptions{N: in.N, MinLength: in.MinLength, SkipStopwords: in.SkipStopwords})
		return nil, TopWordsOut{Words: ws, TotalWords: total}, nil
	})
	return s
}
