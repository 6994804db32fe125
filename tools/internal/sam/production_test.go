package sam_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl/plan"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// These tests assert what a production review expects of the real template.yaml.

// retentionDays are the values CloudWatch Logs accepts for a log group's retention
// (CloudWatch Logs API Reference, PutRetentionPolicy, retentionInDays).
var retentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// logGroupOf returns the logical id of the log group an ARN or name of the resolved
// template names ("" for none of the template's groups).
func logGroupOf(groups map[string]int, nameOrARN string) string {
	for id := range groups {
		if nameOrARN == id || strings.HasSuffix(nameOrARN, ":log-group:"+id+":*") {
			return id
		}
	}
	return ""
}

// Every function logs JSON to a log group of its own, and every HTTP API writes its
// access log to one; each group keeps its lines LogRetentionDays (default 30, one of
// the values CloudWatch Logs accepts), and nothing else.
func TestProduction_EveryFunctionAndAPILogsToItsOwnGroupKeptLogRetentionDays(t *testing.T) {
	param := loadRealTemplate(t).Parameters()["LogRetentionDays"]
	if param.Default == nil || fmt.Sprint(param.Default) != "30" {
		t.Errorf("LogRetentionDays default %v, want 30", param.Default)
	}
	var allowed []int
	for _, v := range param.AllowedValues {
		var n int
		fmt.Sscan(fmt.Sprint(v), &n)
		allowed = append(allowed, n)
	}
	if !slices.Equal(allowed, retentionDays) {
		t.Errorf("LogRetentionDays AllowedValues %v, want CloudWatch Logs' %v", allowed, retentionDays)
	}
	for _, days := range []string{"30", "400"} {
		tpl, err := sam.LoadWithParameters(filepath.Join(testkit.ModuleRoot(t), "template.yaml"), map[string]string{"LogRetentionDays": days})
		if err != nil {
			t.Fatal(err)
		}
		groups := tpl.LogGroups()
		owner := map[string]string{} // log group → who writes to it
		claim := func(who, nameOrARN string) {
			id := logGroupOf(groups, nameOrARN)
			switch {
			case id == "":
				t.Errorf("%s logs to %q, not a log group of the template", who, nameOrARN)
			case owner[id] != "":
				t.Errorf("%s and %s share log group %s", owner[id], who, id)
			default:
				owner[id] = who
			}
		}
		functions, err := tpl.Functions()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range functions {
			if f.LogFormat != "JSON" {
				t.Errorf("%s LogFormat %q, want JSON (Globals' LoggingConfig merged with the function's)", f.Name, f.LogFormat)
			}
			claim(f.Name, f.LogGroup)
		}
		apis, err := tpl.HTTPAPIs()
		if err != nil {
			t.Fatal(err)
		}
		for _, api := range apis {
			if api.AccessLogs == nil {
				t.Errorf("HTTP API %s writes no access log", api.Name)
				continue
			}
			claim(api.Name, api.AccessLogs.DestinationArn)
		}
		for id, retention := range groups {
			if fmt.Sprint(retention) != days {
				t.Errorf("LogRetentionDays=%s: log group %s keeps %d days", days, id, retention)
			}
			if owner[id] == "" {
				t.Errorf("log group %s: nothing writes to it", id)
			}
		}
	}
}

func TestProduction_EveryFunctionIsTraced(t *testing.T) {
	for _, f := range realFunctions(t) {
		if f.Tracing != "Active" {
			t.Errorf("%s Tracing %q, want Active", f.Name, f.Tracing)
		}
	}
}

func TestProduction_TablesAreProtectedRecoverableAndRetained(t *testing.T) {
	settings, err := loadRealTemplate(t).TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 3 {
		t.Errorf("%d tables, want 3", len(settings))
	}
	for _, s := range settings {
		if !s.DeletionProtection || !s.PointInTimeRecovery || s.DeletionPolicy != "Retain" {
			t.Errorf("%s: deletion protection %v, PITR %v, DeletionPolicy %q; want true, true, Retain", s.Name, s.DeletionProtection, s.PointInTimeRecovery, s.DeletionPolicy)
		}
	}
}

// The sale's hot indexes (each order writes entries to them) can be pre-warmed
// (IndexWarmWriteUnits), as many as stockctl plan prices: an index has its own warm
// throughput, and its writes past it throttle the orders' own.
func TestProduction_HotIndexesArePreWarmedAsThePlanPricesThem(t *testing.T) {
	settings, err := loadRealTemplate(t).TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	n := 0
	for _, s := range settings {
		if len(s.WarmIndexes) > 0 {
			got[s.Name] = s.WarmIndexes
			n += len(s.WarmIndexes)
		}
	}
	want := map[string][]string{"OrdersTable": {"PendingByExpiry", "OrdersByUser"}, "StockLogTable": {"LedgerByShard"}}
	if !maps.EqualFunc(got, want, slices.Equal) || n != plan.Today().PreWarmedIndexes {
		t.Errorf("pre-warmed indexes %v, want %v (plan prices %d)", got, want, plan.Today().PreWarmedIndexes)
	}
	if p, ok := loadRealTemplate(t).Parameters()["IndexWarmWriteUnits"]; !ok || fmt.Sprint(p.Default) != "4000" {
		t.Errorf("IndexWarmWriteUnits parameter %+v, want Default 4000 (a new on-demand index's)", p)
	}
}

// allows reports whether a statement of policy allows action (an IAM action pattern
// of the statement may end in *) on resource, to principal kind/name when given.
func allows(policy []sam.Statement, action, resource, kind, name string) *sam.Statement {
	for i, s := range policy {
		if s.Effect != "Allow" || !slices.ContainsFunc(s.Resource, func(r string) bool { return iamMatch(r, resource) }) ||
			!slices.ContainsFunc(s.Action, func(a string) bool { return iamMatch(a, action) }) {
			continue
		}
		if kind == "" || slices.Contains(s.Principal[kind], name) {
			return &policy[i]
		}
	}
	return nil
}

// The alerts topic is encrypted with a customer managed key of the template whose
// policy lets CloudWatch alarms (cloudwatch.amazonaws.com) use it only for this
// account's alarms, and every function that publishes to the topic may use the key
// (Amazon SNS Developer Guide, "Key management": kms:GenerateDataKey* and kms:Decrypt
// for publishers and for AWS services' events).
func TestProduction_AlertsTopicIsEncryptedWithAKeyAlarmsAndPublishersMayUse(t *testing.T) {
	tpl := loadRealTemplate(t)
	keys, err := tpl.KMSKeys()
	if err != nil {
		t.Fatal(err)
	}
	topics := tpl.Topics()
	i := slices.IndexFunc(topics, func(tp sam.Topic) bool { return tp.Name == "AlertsTopic" })
	if i < 0 {
		t.Fatal("no AlertsTopic")
	}
	k := slices.IndexFunc(keys, func(k sam.KMSKey) bool { return k.Name == topics[i].KMSKey })
	if k < 0 {
		t.Fatalf("AlertsTopic KmsMasterKeyId %q is not a KMS key of the template", topics[i].KMSKey)
	}
	key := keys[k]
	if key.KeySpec != "" && key.KeySpec != "SYMMETRIC_DEFAULT" || !key.Rotation {
		t.Errorf("%s: KeySpec %q rotation %v; SNS takes only symmetric keys, and rotation should be on", key.Name, key.KeySpec, key.Rotation)
	}
	keyARN := "arn:aws:kms:" + sam.Region + ":" + sam.AccountID + ":key/" + key.Name
	for _, action := range []string{"kms:GenerateDataKey", "kms:Decrypt"} {
		s := allows(key.Policy, action, "*", "Service", "cloudwatch.amazonaws.com")
		if s == nil {
			t.Errorf("%s policy: cloudwatch.amazonaws.com may not %s", key.Name, action)
			continue
		}
		if got := s.Condition["StringEquals"]["aws:SourceAccount"]; !slices.Equal(got, []string{sam.AccountID}) {
			t.Errorf("%s policy %s: aws:SourceAccount %v, want this account only", key.Name, s.Sid, got)
		}
		want := "arn:aws:cloudwatch:" + sam.Region + ":" + sam.AccountID + ":alarm:*"
		if got := s.Condition["ArnLike"]["aws:SourceArn"]; !slices.Equal(got, []string{want}) {
			t.Errorf("%s policy %s: aws:SourceArn %v, want the account's alarms %s", key.Name, s.Sid, got, want)
		}
	}
	publishers := 0
	for _, f := range realFunctions(t) {
		// Ref AlertsTopic (its ARN, deployed) resolves to the logical id locally.
		if allows(f.Policies.Statements, "sns:Publish", topics[i].Name, "", "") == nil {
			continue
		}
		publishers++
		for _, action := range []string{"kms:GenerateDataKey", "kms:Decrypt"} {
			if allows(f.Policies.Statements, action, keyARN, "", "") == nil {
				t.Errorf("%s publishes alerts but may not %s with %s", f.Name, action, key.Name)
			}
		}
		if allows(key.Policy, "kms:Decrypt", "*", "AWS", "arn:aws:iam::"+sam.AccountID+":root") == nil {
			t.Errorf("%s policy lets no IAM policy of the account grant its use", key.Name)
		}
	}
	if publishers != 2 {
		t.Errorf("%d functions publish alerts, want 2 (reconcile, admin)", publishers)
	}
}

// The orders table, which holds the buyers' openids and addresses, is encrypted at
// rest with a customer managed key of the template (symmetric, rotated, retained like
// the table), whose policy lets the account's IAM policies grant its use through
// DynamoDB only and lets DynamoDB describe it; every function that reads or writes
// the table is granted, through DynamoDB only, what DynamoDB needs of a customer
// managed key (Amazon DynamoDB Developer Guide, "Encryption at rest: how it works":
// kms:Encrypt, kms:Decrypt, kms:ReEncrypt*, kms:GenerateDataKey*, kms:DescribeKey,
// kms:CreateGrant). The other tables hold no personal data and keep the AWS owned key.
func TestProduction_OrdersTableIsEncryptedWithAKeyItsFunctionsMayUseThroughDynamoDB(t *testing.T) {
	tpl := loadRealTemplate(t)
	settings, err := tpl.TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := tpl.KMSKeys()
	if err != nil {
		t.Fatal(err)
	}
	managed, err := tpl.ManagedPolicies()
	if err != nil {
		t.Fatal(err)
	}
	keyARN := func(k sam.KMSKey) string { return "arn:aws:kms:" + sam.Region + ":" + sam.AccountID + ":key/" + k.Name }
	var key sam.KMSKey
	for _, s := range settings {
		want := s.Name == "OrdersTable"
		if got := s.KMSKey != ""; got != want {
			t.Errorf("%s: encrypted with a KMS key %v (%q), want %v", s.Name, got, s.KMSKey, want)
		}
		if want {
			i := slices.IndexFunc(keys, func(k sam.KMSKey) bool { return keyARN(k) == s.KMSKey })
			if i < 0 {
				t.Fatalf("%s KMSMasterKeyId %q is not the ARN of a KMS key of the template", s.Name, s.KMSKey)
			}
			key = keys[i]
		}
	}
	if key.Name == "" {
		t.Fatal("no table is encrypted with a key of the template")
	}
	if key.KeySpec != "" && key.KeySpec != "SYMMETRIC_DEFAULT" || !key.Rotation {
		t.Errorf("%s: KeySpec %q rotation %v; DynamoDB takes only symmetric keys, and rotation should be on", key.Name, key.KeySpec, key.Rotation)
	}
	if i := slices.IndexFunc(tpl.Resources(), func(r sam.Resource) bool { return r.Name == key.Name }); i < 0 || !tpl.Resources()[i].Retained() {
		t.Errorf("%s is not retained: the retained table would outlive its key", key.Name)
	}
	viaDynamoDB := "dynamodb." + sam.Region + ".amazonaws.com"
	needs := []string{"kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt", "kms:GenerateDataKey", "kms:DescribeKey", "kms:CreateGrant"}
	for _, action := range needs {
		s := allows(key.Policy, action, "*", "AWS", "arn:aws:iam::"+sam.AccountID+":root")
		if s == nil {
			t.Errorf("%s policy lets no IAM policy of the account grant %s", key.Name, action)
		} else if dataUse := !slices.Contains([]string{"kms:DescribeKey", "kms:CreateGrant"}, action); dataUse && !slices.Equal(s.Condition["StringEquals"]["kms:ViaService"], []string{viaDynamoDB}) {
			t.Errorf("%s policy %s: %s without kms:ViaService %s", key.Name, s.Sid, action, viaDynamoDB)
		}
	}
	if allows(key.Policy, "kms:DescribeKey", "*", "Service", "dynamodb.amazonaws.com") == nil {
		t.Errorf("%s policy: dynamodb.amazonaws.com may not describe the key", key.Name)
	}
	users := 0
	for _, f := range realFunctions(t) {
		if allows(f.Policies.Statements, "dynamodb:GetItem", "arn:aws:dynamodb:"+sam.Region+":"+sam.AccountID+":table/OrdersTable", "", "") == nil &&
			allows(f.Policies.Statements, "dynamodb:UpdateItem", "arn:aws:dynamodb:"+sam.Region+":"+sam.AccountID+":table/OrdersTable", "", "") == nil {
			continue
		}
		users++
		var granted []sam.Statement
		for _, m := range managed {
			if slices.Contains(f.Policies.Managed, m.Name) {
				granted = append(granted, m.Statements...)
			}
		}
		for _, action := range needs {
			s := allows(granted, action, keyARN(key), "", "")
			if s == nil {
				t.Errorf("%s uses the orders table but may not %s with %s", f.Name, action, key.Name)
			} else if !slices.Equal(s.Condition["StringEquals"]["kms:ViaService"], []string{viaDynamoDB}) {
				t.Errorf("%s: %s granted by %s without kms:ViaService %s", f.Name, action, s.Sid, viaDynamoDB)
			}
		}
	}
	if users != 10 {
		t.Errorf("%d functions use the orders table, want 10 (all but jwks)", users)
	}
}

// Every EventBridge schedule retries a bounded time and then sends what it could not
// deliver to a dead-letter queue of the template, which lets events.amazonaws.com send
// only for that schedule's rule and has an alarm (Amazon EventBridge User Guide,
// "Event retry policy and using dead-letter queues").
func TestProduction_EveryScheduleHasARetryPolicyAndADeadLetterQueue(t *testing.T) {
	tpl := loadRealTemplate(t)
	policies, err := tpl.QueuePolicies()
	if err != nil {
		t.Fatal(err)
	}
	alarms, err := tpl.Alarms()
	if err != nil {
		t.Fatal(err)
	}
	schedules := 0
	for _, f := range realFunctions(t) {
		for _, ev := range f.Events.Schedule {
			schedules++
			where := f.Name + " " + ev.Name
			if r := ev.RetryPolicy; r == nil || r.MaximumEventAgeInSeconds < 60 || r.MaximumEventAgeInSeconds > 86400 || r.MaximumRetryAttempts > 185 {
				t.Errorf("%s: retry policy %+v, want one within EventBridge's bounds", where, r)
			}
			if ev.DeadLetterQueue == "" {
				t.Errorf("%s: no dead-letter queue", where)
				continue
			}
			// SAM names a Schedule event's rule <Function><Event>.
			rule := "arn:aws:events:" + sam.Region + ":" + sam.AccountID + ":rule/" + f.Name + ev.Name
			queueARN := "arn:aws:sqs:" + sam.Region + ":" + sam.AccountID + ":" + ev.DeadLetterQueue
			granted := false
			for _, p := range policies {
				if !slices.Contains(p.Queues, ev.DeadLetterQueue) {
					continue
				}
				s := allows(p.Statements, "sqs:SendMessage", queueARN, "Service", "events.amazonaws.com")
				granted = granted || s != nil && slices.Contains(s.Condition["ArnEquals"]["aws:SourceArn"], rule)
			}
			if !granted {
				t.Errorf("%s: no queue policy of %s lets events.amazonaws.com send for rule %s (and only its rules)", where, ev.DeadLetterQueue, rule)
			}
			if !slices.ContainsFunc(alarms, func(a sam.Alarm) bool {
				return slices.ContainsFunc(a.Metrics, func(m sam.MetricRef) bool {
					return m.Namespace == "AWS/SQS" && m.Name == "ApproximateNumberOfMessagesVisible" && m.Dimensions["QueueName"] == ev.DeadLetterQueue
				})
			}) {
				t.Errorf("%s: no alarm watches dead-letter queue %s", where, ev.DeadLetterQueue)
			}
		}
	}
	if schedules != 5 {
		t.Errorf("%d schedules, want 5 (sweep, reconcile, stuck refunds, chat digests, admitter)", schedules)
	}
}

// State a stack update must not replace nor a stack deletion delete is retained: the
// tables, the token-signing key (a new one logs every buyer out), every log group and
// every dead-letter queue (an on-failure destination of asynchronous invocations is
// one too). Nothing else is: the work queues' losses are made good by
// the sweep and the stuck-refund pass, and the alerts key encrypts only messages in
// transit; they say Delete.
func TestProduction_StateIsRetained(t *testing.T) {
	tpl := loadRealTemplate(t)
	queues, err := tpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	deadLetter := map[string]bool{}
	for _, q := range queues {
		if q.DeadLetterQueue != "" {
			deadLetter[q.DeadLetterQueue] = true
		}
	}
	for _, f := range realFunctions(t) {
		for _, ev := range f.Events.Schedule {
			deadLetter[ev.DeadLetterQueue] = true
		}
		if f.EventInvoke != nil && f.EventInvoke.OnFailure != "" {
			deadLetter[f.EventInvoke.OnFailure] = true // asynchronous invocations' dead letters
		}
	}
	var retained, want []string
	for _, r := range tpl.Resources() {
		if r.Retained() {
			retained = append(retained, r.Name)
		}
		// Every resource that holds state says what happens to it, Retain or Delete
		// (cfn-lint's I3011 asks the same).
		stateful := slices.Contains([]string{"AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::KMS::Key", "AWS::Logs::LogGroup"}, r.Type)
		if stateful && (r.DeletionPolicy == "" || r.UpdateReplacePolicy == "") {
			t.Errorf("%s (%s): DeletionPolicy %q, UpdateReplacePolicy %q; want both stated", r.Name, r.Type, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
		switch {
		case r.Type == "AWS::DynamoDB::Table", r.Type == "AWS::Logs::LogGroup", strings.HasPrefix(r.Name, "SigningKey"),
			// The key the retained orders table is encrypted with.
			r.Name == "OrdersTableKey",
			r.Type == "AWS::SQS::Queue" && deadLetter[r.Name],
			// The staff accounts; the console's bucket, which CloudFormation cannot delete
			// while it holds the uploaded files.
			r.Type == "AWS::Cognito::UserPool", r.Type == "AWS::S3::Bucket":
			want = append(want, r.Name)
		}
	}
	if !slices.Equal(retained, want) {
		t.Errorf("retained (DeletionPolicy and UpdateReplacePolicy Retain):\n got %v\nwant %v", retained, want)
	}
	if len(want) < 3+1+10+3 {
		t.Errorf("retained %v: want 3 tables, the signing key, 10 log groups, 3 dead-letter queues", want)
	}
}

// createOrder and payCallback deploy gradually: a canary through an alias, rolled back
// by the API's 5xx rate alarm and by the function's own errors alarm. The 5xx alarm
// reads the access log's metrics by stack, not the API (which the alias's deployment
// may not depend on; TestCheckDependencies_TemplateHasNoCycle checks the graph).
func TestProduction_CreateOrderAndPayCallbackDeployGradually(t *testing.T) {
	tpl := loadRealTemplate(t)
	alarms := realByName(t, (*sam.Template).Alarms, func(a sam.Alarm) string { return a.Name })
	groups := tpl.LogGroups()
	apis := realByName(t, (*sam.Template).HTTPAPIs, func(a sam.HTTPAPI) string { return a.Name })
	mainLogs := logGroupOf(groups, apis["HttpApi"].AccessLogs.DestinationArn)
	for _, f := range realFunctions(t) {
		if f.Name != "CreateOrderFunction" && f.Name != "PayCallbackFunction" {
			continue
		}
		d := f.DeploymentPreference
		if f.AutoPublishAlias == "" || d == nil || !strings.HasPrefix(d.Type, "Canary") {
			t.Errorf("%s: alias %q, deployment %+v; want an alias and a Canary deployment", f.Name, f.AutoPublishAlias, d)
			continue
		}
		var apiErrors, functionErrors bool
		for _, name := range d.Alarms {
			a, ok := alarms[name]
			if !ok {
				t.Errorf("%s: deployment alarm %s is not an alarm of the template", f.Name, name)
				continue
			}
			for _, m := range a.Metrics {
				functionErrors = functionErrors || m.Namespace == "AWS/Lambda" && m.Name == "Errors" && m.Dimensions["FunctionName"] == f.Name
				if m.Name == "Status5xx" {
					apiErrors = slices.ContainsFunc(tpl.LogMetrics(), func(lm sam.LogMetric) bool {
						return lm.Metric.Namespace == m.Namespace && lm.Metric.Name == m.Name && logGroupOf(groups, lm.LogGroup) == mainLogs
					}) && m.Dimensions["stack"] == sam.StackName
				}
			}
		}
		if !apiErrors || !functionErrors {
			t.Errorf("%s: deployment alarms %v; want HttpApi's 5xx rate (from its access log, by stack) %v and the function's errors %v", f.Name, d.Alarms, apiErrors, functionErrors)
		}
	}
	if !strings.Contains(apis["HttpApi"].AccessLogs.Format, `"stack":"`+sam.StackName+`"`) {
		t.Errorf("HttpApi access log format %s: no literal stack field for the metrics' dimension", apis["HttpApi"].AccessLogs.Format)
	}
}

// The planner counts the template's reservations as the template sets them:
// closeOrder's and payCallback's defaults, and every other function's, which the
// account concurrency it asks for must leave beside createOrder's (Lambda refuses
// provisioned or reserved concurrency that leaves less than 100 unreserved).
func TestProduction_ThePlannerCountsEveryReservation(t *testing.T) {
	x := plan.Today()
	want := map[string]int{"CloseOrderFunction": x.CloseOrderReserved, "PayCallbackFunction": x.PayCallbackReserved}
	others := 0
	for _, f := range realFunctions(t) {
		if f.ReservedConcurrency == nil {
			continue
		}
		if w, ok := want[f.Name]; ok {
			if *f.ReservedConcurrency != w {
				t.Errorf("%s reserves %d, the planner counts %d", f.Name, *f.ReservedConcurrency, w)
			}
			continue
		}
		others += *f.ReservedConcurrency
	}
	if others != x.OtherReserved {
		t.Errorf("the other functions reserve %d, the planner counts %d", others, x.OtherReserved)
	}
}
