// Package tables gives the functions' wiring the store on its tables: the three
// table names read from the environment the main passes, and the deployed store opened
// on them. It links the store and nothing of the capabilities, so a main that needs
// only the store (alertChat, login) stays small.
package tables

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/wiring"
)

// Read reads the three table names into *dst: SKUS_TABLE, ORDERS_TABLE and
// STOCK_LOG_TABLE, each required (an *envvar.Error names the first missing).
func Read(dst *dynamo.Tables) wiring.Setting {
	return func(get envvar.Lookup) (err error) {
		for _, v := range []struct {
			name string
			dst  *string
		}{{envvar.SKUsTable, &dst.SKUs}, {envvar.OrdersTable, &dst.Orders}, {envvar.StockLogTable, &dst.StockLog}} {
			if *v.dst, err = envvar.Required(get, v.name, "a DynamoDB table name"); err != nil {
				return err
			}
		}
		return nil
	}
}

// Open is the deployed store on t through cfg's DynamoDB client, with the store's
// default options (dynamo.Open).
func Open(cfg aws.Config, t dynamo.Tables) *dynamo.Store {
	return dynamo.Open(cfg, t, dynamo.Options{})
}
