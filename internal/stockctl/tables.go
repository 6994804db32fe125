package stockctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The table views decode the routes' JSON (CONTRACT.md, Merchant API) into these.

type shardView struct {
	Shard, Available, Reserved, OnHand int
}

type skuView struct {
	SKU          string `json:"skuId"`
	Name         string
	Price        int64
	Status       string
	SaleStartsAt string
	LimitPerUser int
	Shards       int
	Available    int
	Reserved     int
	OnHand       int
	PerShard     []shardView
	UpdatedBy    string
	UpdatedAt    string
}

func fen(p int64) string { return fmt.Sprintf("¥%d.%02d", p/100, p%100) }

func decode[T any](data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("unexpected answer: %w", err)
	}
	return v, nil
}

func printSKU(w io.Writer, data []byte) error {
	s, err := decode[skuView](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SKU\t%s\t%s\n", s.SKU, s.Name)
	fmt.Fprintf(tw, "price\t%s\t(%d fen)\n", fen(s.Price), s.Price)
	fmt.Fprintf(tw, "status\t%s\t%s\n", s.Status, s.SaleStartsAt)
	fmt.Fprintf(tw, "limit per user\t%d\t\n", s.LimitPerUser)
	fmt.Fprintf(tw, "stock\tavailable %d\treserved %d\ton-hand %d\n", s.Available, s.Reserved, s.OnHand)
	fmt.Fprintf(tw, "updated\t%s\t%s\n\n", s.UpdatedAt, s.UpdatedBy)
	fmt.Fprintf(tw, "SHARD\tAVAILABLE\tRESERVED\tON-HAND\n")
	for _, sh := range s.PerShard {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\n", sh.Shard, sh.Available, sh.Reserved, sh.OnHand)
	}
	return tw.Flush()
}

func printSKULine(w io.Writer, data []byte) error {
	s, err := decode[skuView](data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\t%s\t%s\tavailable %d\n", s.SKU, s.Status, fen(s.Price), s.Available)
	return err
}

func printSKUs(w io.Writer, data []byte) error {
	page, err := decode[struct {
		SKUs []skuView
		Next string
	}](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SKU\tNAME\tPRICE\tSTATUS\tAVAILABLE\tRESERVED\tON-HAND\tSHARDS\n")
	for _, s := range page.SKUs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", s.SKU, s.Name, fen(s.Price), s.Status, s.Available, s.Reserved, s.OnHand, s.Shards)
	}
	return flushWithNext(tw, w, page.Next)
}

// flushWithNext flushes tw and names the next page's cursor, if any.
func flushWithNext(tw *tabwriter.Writer, w io.Writer, next string) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	if next != "" {
		_, err := fmt.Fprintf(w, "\nmore: --after %s\n", next)
		return err
	}
	return nil
}

func printAdjustment(w io.Writer, data []byte) error {
	a, err := decode[struct {
		AdjustmentID string
		Delta        int
		Reason       string
		Replayed     bool
		SKU          json.RawMessage
	}](data)
	if err != nil {
		return err
	}
	what := "applied"
	if a.Replayed {
		what = "already applied before (nothing changed)"
	}
	fmt.Fprintf(w, "adjustment %s (%+d, %s): %s\n\n", a.AdjustmentID, a.Delta, a.Reason, what)
	return printSKU(w, a.SKU)
}

func printReshard(w io.Writer, data []byte) error {
	r, err := decode[struct {
		SKU                  string `json:"skuId"`
		Shards, TargetShards int
		Moved                int
		Complete             bool
	}](data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d shards (asked %d), %d units moved\n", r.SKU, r.Shards, r.TargetShards, r.Moved)
	if !r.Complete {
		fmt.Fprintln(w, "not complete: shards past the target still hold units reserved by PENDING orders; run it again once they are paid or released")
	}
	return nil
}

func printLedger(w io.Writer, data []byte) error {
	page, err := decode[struct {
		Entries []struct {
			At, Op, Ref, Reason, By  string
			Qty, DAvailable, DOnHand int
		}
		Next string
	}](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "AT\tOP\tREF\tQTY\tΔAVAILABLE\tΔON-HAND\tBY\tREASON\n")
	for _, e := range page.Entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%+d\t%+d\t%s\t%s\n", e.At, e.Op, e.Ref, e.Qty, e.DAvailable, e.DOnHand, e.By, e.Reason)
	}
	return flushWithNext(tw, w, page.Next)
}

type orderView struct {
	OrderID, Status, UserID, CreatedAt, ExpiresAt string
	Amount                                        int64
	Items                                         []struct {
		SKU       string `json:"skuId"`
		Qty       int
		UnitPrice int64
	}
}

func printOrder(w io.Writer, data []byte) error {
	o, err := decode[orderView](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "order\t%s\t%s\nuser\t%s\t\namount\t%s\t\ncreated\t%s\t\nexpires\t%s\t\n\nSKU\tQTY\tUNIT PRICE\n",
		o.OrderID, o.Status, o.UserID, fen(o.Amount), o.CreatedAt, o.ExpiresAt)
	for _, it := range o.Items {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", it.SKU, it.Qty, fen(it.UnitPrice))
	}
	return tw.Flush()
}

func printOrders(w io.Writer, data []byte) error {
	page, err := decode[struct {
		Orders []orderView
		Next   string
	}](data)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "ORDER\tSTATUS\tUSER\tAMOUNT\tEXPIRES\n")
	for _, o := range page.Orders {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", o.OrderID, o.Status, o.UserID, fen(o.Amount), o.ExpiresAt)
	}
	return flushWithNext(tw, w, page.Next)
}

// report is reconcile's report (CONTRACT.md, POST /_local/invoke/reconcile).
type report struct {
	SKUsChecked int `json:"skusChecked"`
	Differences []struct {
		SKU              string `json:"skuId"`
		Rule             string `json:"rule"`
		Expected, Actual int
	} `json:"differences"`
	OverdueOrders []string `json:"overdueOrders"`
	Repaired      []struct {
		SKU   string `json:"skuId"`
		Rule  string `json:"rule"`
		Delta int    `json:"delta"`
	} `json:"repaired"`
	RefundProblems []string `json:"refundProblems"`
	StuckRefunds   []string `json:"stuckRefunds"`
}

// printReport prints a reconcile report: a summary line, then each difference, each
// repair and each overdue order.
func printReport(w io.Writer, data []byte) error {
	r, err := decode[report](data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d SKUs checked, %d differences, %d overdue orders, %d repairs, %d refund problems, %d stuck refunds\n",
		r.SKUsChecked, len(r.Differences), len(r.OverdueOrders), len(r.Repaired), len(r.RefundProblems), len(r.StuckRefunds))
	if len(r.Differences) == 0 && len(r.RefundProblems) == 0 {
		fmt.Fprintln(w, "the books balance")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Differences) > 0 {
		fmt.Fprintf(tw, "\nSKU\tRULE\tEXPECTED\tACTUAL\n")
		for _, d := range r.Differences {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", d.SKU, d.Rule, d.Expected, d.Actual)
		}
	}
	if len(r.Repaired) > 0 {
		fmt.Fprintf(tw, "\nREPAIRED SKU\tRULE\tDELTA\n")
		for _, d := range r.Repaired {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", d.SKU, d.Rule, d.Delta)
		}
	}
	if len(r.OverdueOrders) > 0 {
		fmt.Fprintf(tw, "\nOVERDUE ORDER\n")
		for _, id := range r.OverdueOrders {
			fmt.Fprintf(tw, "%s\n", id)
		}
	}
	for _, list := range []struct {
		head  string
		lines []string
	}{{"REFUND PROBLEM", r.RefundProblems}, {"STUCK REFUND (out_refund_no)", r.StuckRefunds}} {
		if len(list.lines) > 0 {
			fmt.Fprintf(tw, "\n%s\n%s\n", list.head, strings.Join(list.lines, "\n"))
		}
	}
	return tw.Flush()
}
