package alertchat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// alarmNotification is internal/alertchat's CloudWatch alarm fixture (an SNS
// notification as Lambda delivers it) for the alarm named name with description.
func alarmNotification(t *testing.T, root, name, description string) events.SNSEntity {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "internal", "alertchat", "testdata", "alarm-sns-event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SNSEvent
	var p events.CloudWatchAlarmSNSPayload
	if err := json.Unmarshal(data, &ev); err != nil || len(ev.Records) != 1 {
		t.Fatalf("alarm fixture: %v", err)
	}
	n := ev.Records[0].SNS
	if err := json.Unmarshal([]byte(n.Message), &p); err != nil {
		t.Fatal(err)
	}
	p.AlarmName, p.AlarmDescription = name, description
	message, _ := json.Marshal(p)
	n.Message = string(message)
	return n
}

// Every alarm of template.yaml, as CloudWatch would notify it (CloudFormation names it
// <stack>-<logical id>-<suffix>), is posted with its own RUNBOOK.md entry, which exists.
func TestFromSNS_EveryTemplateAlarmPointsAtItsRunbookEntry(t *testing.T) {
	root := testkit.ModuleRoot(t)
	tpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	alarms, err := tpl.Alarms()
	if err != nil {
		t.Fatal(err)
	}
	runbook, err := os.ReadFile(filepath.Join(root, "RUNBOOK.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := regexp.MustCompile(`(?m)^## (\S+)$`).FindAllStringSubmatch(string(runbook), -1)
	for _, al := range alarms {
		a := alertchat.FromSNS(alarmNotification(t, root, "stockguard-"+al.Name+"-1ABCDEF", al.Description), "RUNBOOK.md")
		if a.Message.RunbookEntry != al.Name || a.Message.Title != "ALARM: "+al.Name || a.Message.Runbook != "RUNBOOK.md#"+strings.ToLower(al.Name) {
			t.Errorf("%s: title %q, runbook %q %q", al.Name, a.Message.Title, a.Message.RunbookEntry, a.Message.Runbook)
		}
		if !slices.ContainsFunc(headings, func(h []string) bool { return h[1] == al.Name }) {
			t.Errorf("%s: no RUNBOOK.md heading", al.Name)
		}
	}
}
