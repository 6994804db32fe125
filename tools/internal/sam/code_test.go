package sam_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// maxFunctionLines is the longest a function of the repository's own code may be,
// from its func keyword to its closing brace: a function that needs more is doing more
// than one thing.
const maxFunctionLines = 60

// Every function of the repository's non-test Go code (third_party aside) is at most
// maxFunctionLines long.
func TestCode_NoFunctionIsLongerThanSixtyLines(t *testing.T) {
	root := testkit.ModuleRoot(t)
	fset := token.NewFileSet()
	functions := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "third_party" || d.Name() == "node_modules" || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			functions++
			if n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Pos()).Line + 1; n > maxFunctionLines {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %s is %d lines, over %d", rel, fset.Position(fd.Pos()).Line, fd.Name.Name, n, maxFunctionLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if functions < 1000 {
		t.Errorf("only %d functions read", functions)
	}
}
