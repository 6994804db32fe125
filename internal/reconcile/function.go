package reconcile

import (
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
)

// FunctionConfig is the reconcile function's configuration, read from its environment
// by LoadFunctionConfig.
type FunctionConfig struct {
	Tables    dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	Reconcile Config        // from Settings; Topic is ALERTS_TOPIC_ARN
}

// LoadFunctionConfig reads reconcile's variables (template.yaml, ReconcileFunction):
// the table names and the Settings, every one of which must be set, then parsed by
// Settings.Config. A missing one is an *envvar.Error naming it; an invalid one an
// error from Settings.Config naming it.
func LoadFunctionConfig(get envvar.Lookup) (FunctionConfig, error) {
	tables, err := envvar.Tables(get)
	if err != nil {
		return FunctionConfig{}, err
	}
	var s Settings
	for _, v := range []struct {
		name, want string
		dst        *string
	}{
		{"REPAIR_ENABLED", "true or false", &s.RepairEnabled},
		{"REPAIR_WINDOW", "HH:MM-HH:MM", &s.RepairWindow},
		{"REPAIR_TIMEZONE", "an IANA time zone name, e.g. Asia/Shanghai", &s.RepairTimezone},
		{"ALERT_MIN_UNITS", "a positive number of units", &s.AlertMinUnits},
		{"ALERT_PERCENT", "a positive percentage", &s.AlertPercent},
		{"OVERDUE_GRACE_SECONDS", "a positive number of seconds", &s.OverdueGraceSeconds},
		{"FULL_CHECK_DAYS", "a positive number of days", &s.FullCheckDays},
		{"ALERTS_TOPIC_ARN", "the ARN of the alerts SNS topic", &s.AlertsTopicARN},
		{"REFUND_STUCK_SECONDS", "a positive number of seconds", &s.RefundStuckSeconds},
	} {
		if *v.dst, err = envvar.Required(get, v.name, v.want); err != nil {
			return FunctionConfig{}, err
		}
	}
	cfg, err := s.Config()
	if err != nil {
		return FunctionConfig{}, err
	}
	return FunctionConfig{Tables: tables, Reconcile: cfg}, nil
}
