package dashboardtest

import "testing"

// The provisioned density datasource names the provisioned Prometheus
// datasource for its Explore links (exploreDatasourceUid).
func TestProvisionedExploreDatasource(t *testing.T) {
	prov := loadProvisioning(t)
	uid, _ := prov["substrate-density"].JSONData["exploreDatasourceUid"].(string)
	p, ok := prov[uid]
	if !ok || p.Type != "prometheus" {
		t.Fatalf("exploreDatasourceUid %q is not a provisioned Prometheus datasource", uid)
	}
}
