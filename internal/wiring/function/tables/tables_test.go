package tables

import (
	"errors"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
)

func TestTables_NamesTheFirstMissingTable(t *testing.T) {
	all := map[string]string{envvar.SKUsTable: "s", envvar.OrdersTable: "o", envvar.StockLogTable: "l"}
	var got dynamo.Tables
	if err := Read(&got)(envvar.Map(all)); err != nil || got != (dynamo.Tables{SKUs: "s", Orders: "o", StockLog: "l"}) {
		t.Errorf("%+v %v", got, err)
	}
	for name := range all {
		vars := map[string]string{envvar.SKUsTable: "s", envvar.OrdersTable: "o", envvar.StockLogTable: "l"}
		vars[name] = ""
		var e *envvar.Error
		if err := Read(new(dynamo.Tables))(envvar.Map(vars)); !errors.As(err, &e) || e.Name != name {
			t.Errorf("%s empty: %v", name, err)
		}
	}
}
