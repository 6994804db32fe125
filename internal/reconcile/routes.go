package reconcile

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
)

// Route keys of the merchant's reconcile routes (API Gateway RouteKey values, see
// template.yaml).
const (
	RouteRun    = "POST /admin/reconcile"
	RouteLatest = "GET /admin/reconcile/latest"
)

// Reports reads the latest reconcile report kept by Run (dynamo.Store).
type Reports interface {
	LatestReport(ctx context.Context) ([]byte, error)
}

// Routes serves the merchant's reconcile routes (docs/contract.md, "Merchant API").
type Routes struct {
	recon   *Reconciler
	reports Reports
}

// NewRoutes returns the routes running recon and reading reports.
func NewRoutes(recon *Reconciler, reports Reports) *Routes {
	return &Routes{recon: recon, reports: reports}
}

// Run serves RouteRun: reconcile runs now (the same Run as the schedule's) and
// answers its report.
func (r *Routes) Run(ctx context.Context, _ events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	rep, err := r.recon.Run(ctx)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, rep), nil
}

// Latest serves RouteLatest: the last report kept, 404 NOT_FOUND before any run.
func (r *Routes) Latest(ctx context.Context, _ events.APIGatewayV2HTTPRequest, _ string) (events.APIGatewayV2HTTPResponse, error) {
	data, err := r.reports.LatestReport(ctx)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if data == nil {
		return httpapi.ErrorResponse(http.StatusNotFound, "NOT_FOUND", "reconcile has not run yet", ""), nil
	}
	return httpapi.JSON(http.StatusOK, json.RawMessage(data)), nil
}
