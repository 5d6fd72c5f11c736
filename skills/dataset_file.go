package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/scidex/substrate/runtimes"
)

// datasetFile is a dataset's file as its artifact declares it: the
// artifact records the hash, the server's dataset directory holds the bytes.
type datasetFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   *int64 `json:"size"`
}

// datasetReader reads a dataset's file while hashing it.
type datasetReader struct {
	io.Reader // the file, through the hash
	size      int64
	file      *os.File
	hash      hash.Hash
	dataset   string
	declared  datasetFile
}

// openDatasetFile opens a declared file under dir. The file must be a
// regular file inside dir (os.Root refuses "..", absolute paths and symlinks
// that leave it) of the declared size, when one is declared. The caller reads
// it, then calls verify, which reads what is left and says whether the bytes
// are the ones the dataset declares: a report on other bytes would be about
// another dataset. Messages name the dataset's own path, never the server's.
func openDatasetFile(dir, dataset string, f datasetFile) (*datasetReader, error) {
	if dir == "" {
		return nil, runtimes.Errorf("no_dataset_dir", true, "this server reads no dataset files (--dataset-dir is not set)")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, runtimes.Errorf("no_dataset_dir", true, "the dataset directory cannot be opened")
	}
	file, err := root.Open(f.Path)
	_ = root.Close()
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, runtimes.Errorf("file_missing", false, "dataset %s: its file %q is not in the dataset directory", dataset, f.Path)
		case strings.Contains(err.Error(), "escapes"):
			return nil, runtimes.Errorf("file_outside", false, "dataset %s: its file %q is outside the dataset directory", dataset, f.Path)
		}
		return nil, runtimes.Errorf("file_unreadable", false, "dataset %s: its file %q cannot be opened", dataset, f.Path)
	}
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		_ = file.Close()
		return nil, runtimes.Errorf("file_unreadable", false, "dataset %s: its file %q is not a regular file", dataset, f.Path)
	}
	if f.Size != nil && *f.Size != st.Size() {
		_ = file.Close()
		return nil, runtimes.Errorf("file_altered", false, "dataset %s: its file %q is %d bytes, the dataset declares %d", dataset, f.Path, st.Size(), *f.Size)
	}
	h := sha256.New()
	return &datasetReader{Reader: io.TeeReader(file, h), size: st.Size(), file: file, hash: h, dataset: dataset, declared: f}, nil
}

// verify reads what is left of the file and compares its hash with the
// declared one.
func (d *datasetReader) verify() error {
	if _, err := io.Copy(d.hash, d.file); err != nil {
		return runtimes.Errorf("file_unreadable", false, "dataset %s: reading its file %q failed", d.dataset, d.declared.Path)
	}
	if got := hex.EncodeToString(d.hash.Sum(nil)); got != d.declared.SHA256 {
		return runtimes.Errorf("file_altered", false, "dataset %s: its file %q has sha256 %s, the dataset declares %s: the file is not the one the dataset names, so no report is given",
			d.dataset, d.declared.Path, got, d.declared.SHA256)
	}
	return nil
}

func (d *datasetReader) close() { _ = d.file.Close() }

// pickFile is the file of the dataset the call names (file), or its only
// CSV file when it names none.
func pickFile(dataset, name string, files []datasetFile) (datasetFile, error) {
	var csvs []string
	for _, f := range files {
		if name != "" && f.Path == name {
			return f, nil
		}
		if strings.HasSuffix(strings.ToLower(f.Path), ".csv") {
			csvs = append(csvs, f.Path)
		}
	}
	if name == "" && len(csvs) == 1 {
		return pickFile(dataset, csvs[0], files)
	}
	var all []string
	for _, f := range files {
		all = append(all, fmt.Sprintf("%q", f.Path))
	}
	if name != "" {
		return datasetFile{}, runtimes.Errorf("file_not_declared", false, "dataset %s declares no file %q (its files: %s)", dataset, name, strings.Join(all, ", "))
	}
	return datasetFile{}, runtimes.Errorf("no_table", false, "dataset %s keeps no table inline and has %d CSV files: name one with file (its files: %s)", dataset, len(csvs), strings.Join(all, ", "))
}
