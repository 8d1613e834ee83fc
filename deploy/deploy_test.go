package deploy

import (
	"context"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// manifests are the objects the Kustomize base renders, decoded strictly
// into the API types.
type manifests struct {
	deployment     appsv1.Deployment
	pdb            policyv1.PodDisruptionBudget
	service        corev1.Service
	secret         corev1.Secret
	serviceMonitor monitoringv1.ServiceMonitor
}

// render runs kustomize (as kubectl apply -k does) on kubernetes/ and
// decodes each object into its Go type, refusing unknown or duplicate
// fields: a misspelt or misplaced field fails here instead of being
// dropped by the API server.
func render(t *testing.T) manifests {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), "kubernetes")
	if err != nil {
		t.Fatalf("kustomize build kubernetes: %v", err)
	}
	var m manifests
	seen := map[string]int{}
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		kind := r.GetKind()
		seen[kind]++
		var obj any
		switch kind {
		case "Deployment":
			obj = &m.deployment
		case "PodDisruptionBudget":
			obj = &m.pdb
		case "Service":
			obj = &m.service
		case "Secret":
			obj = &m.secret
		case "ServiceMonitor":
			obj = &m.serviceMonitor
		default:
			t.Errorf("unexpected %s %s", kind, r.GetName())
			continue
		}
		if err := yaml.UnmarshalStrict(y, obj); err != nil {
			t.Errorf("%s %s does not decode strictly into its API type: %v\n%s", kind, r.GetName(), err, y)
		}
	}
	want := map[string]int{"Deployment": 1, "PodDisruptionBudget": 1, "Service": 1, "Secret": 1, "ServiceMonitor": 1}
	if !maps.Equal(seen, want) {
		t.Fatalf("rendered %v, want %v", seen, want)
	}
	return m
}

// TestManifests: the base renders, each object is valid for its API type,
// and they fit together: the probes, the Service and the ServiceMonitor
// reach the metrics port the relay serves, the DSN Secret is mounted where
// JITOUTBOX_DSN_FILE points, the PDB and the Service select the relay's
// pods, and the relay runs as non-root with resource requests.
func TestManifests(t *testing.T) {
	m := render(t)
	d := m.deployment
	pod := d.Spec.Template
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: want at least 2 relays sharing the partitions", d.Spec.Replicas)
	}
	if !matches(d.Spec.Selector.MatchLabels, pod.Labels) {
		t.Errorf("the Deployment's selector %v does not match its pods' labels %v", d.Spec.Selector.MatchLabels, pod.Labels)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want the relay alone", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}

	// The metrics port: -metrics-addr, the container port, the probes.
	port := containerPort(t, c, "metrics")
	if got := env["JITOUTBOX_METRICS_ADDR"].Value; got != ":"+port.String() {
		t.Errorf("JITOUTBOX_METRICS_ADDR %q, want :%s (the container port named metrics)", got, port.String())
	}
	checkProbe(t, "liveness", c.LivenessProbe, "/healthz")
	checkProbe(t, "readiness", c.ReadinessProbe, "/readyz")

	// The DSN comes from the Secret, as a file.
	if _, ok := env["JITOUTBOX_DSN"]; ok {
		t.Error("JITOUTBOX_DSN is set: the DSN must be read from the mounted Secret (JITOUTBOX_DSN_FILE)")
	}
	dsnFile := env["JITOUTBOX_DSN_FILE"].Value
	var mounted bool
	for _, vm := range c.VolumeMounts {
		dir := strings.TrimSuffix(vm.MountPath, "/") + "/"
		rel, ok := strings.CutPrefix(dsnFile, dir)
		if !ok {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name != vm.Name || v.Secret == nil || v.Secret.SecretName != m.secret.Name {
				continue
			}
			for _, it := range v.Secret.Items {
				if it.Path == rel {
					_, inData := m.secret.Data[it.Key]
					_, inString := m.secret.StringData[it.Key]
					mounted = (inData || inString) && vm.ReadOnly
				}
			}
		}
	}
	if !mounted {
		t.Errorf("JITOUTBOX_DSN_FILE %q is not a key of Secret %s mounted read-only", dsnFile, m.secret.Name)
	}
	if env["JITOUTBOX_OWNER"].ValueFrom == nil || env["JITOUTBOX_OWNER"].ValueFrom.FieldRef == nil ||
		env["JITOUTBOX_OWNER"].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Error("JITOUTBOX_OWNER must be the pod's name: relay names are unique per relay")
	}

	// Non-root, requests set, a memory limit, no CPU limit (a drain runs
	// at full speed).
	psc := pod.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("the pod must run as a non-root user")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the relay writes no file: its root filesystem should be read-only")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("memory limit %v below the request", c.Resources.Limits[corev1.ResourceMemory])
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit throttles drains; the request carries the sizing")
	}
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("100m")) < 0 {
		t.Errorf("CPU request %v is below 2,000 events/s x 50 µs = 100m", &cpu)
	}

	// The PDB and the Service select the relays.
	if m.pdb.Spec.Selector == nil || !matches(m.pdb.Spec.Selector.MatchLabels, pod.Labels) {
		t.Error("the PodDisruptionBudget does not select the relay's pods")
	}
	if m.pdb.Spec.MaxUnavailable == nil && m.pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget sets no budget")
	}
	if !matches(m.service.Spec.Selector, pod.Labels) {
		t.Error("the metrics Service does not select the relay's pods")
	}
	var svcPort *corev1.ServicePort
	for i, p := range m.service.Spec.Ports {
		if p.Name == "metrics" {
			svcPort = &m.service.Spec.Ports[i]
		}
	}
	if svcPort == nil || (svcPort.TargetPort != intstr.FromString("metrics") && svcPort.TargetPort != port) {
		t.Errorf("the Service has no port named metrics targeting the container's: %+v", m.service.Spec.Ports)
	}

	// The ServiceMonitor scrapes that Service's port.
	sm := m.serviceMonitor
	if !matches(sm.Spec.Selector.MatchLabels, m.service.Labels) {
		t.Errorf("the ServiceMonitor selects %v, not the Service's labels %v", sm.Spec.Selector.MatchLabels, m.service.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor must scrape port metrics, path /metrics: %+v", sm.Spec.Endpoints)
	}
}

// TestManifestVariablesAreFlags: every JITOUTBOX_* variable the Deployment
// sets is one jitoutbox-relay -h names, so a typo does not pass silently
// as an unknown variable.
func TestManifestVariablesAreFlags(t *testing.T) {
	m := render(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/jitoutbox-relay", "-h")
	cmd.Dir = ".." // the library's module
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jitoutbox-relay -h: %v\n%s", err, out)
	}
	var names []string
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		names = append(names, e.Name)
		if !strings.Contains(string(out), "[$"+e.Name+"]") {
			t.Errorf("the Deployment sets %s, which jitoutbox-relay -h does not name", e.Name)
		}
	}
	if !slices.Contains(names, "JITOUTBOX_DSN_FILE") {
		t.Errorf("no JITOUTBOX_DSN_FILE in %v", names)
	}
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func containerPort(t *testing.T, c corev1.Container, name string) intstr.IntOrString {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return intstr.FromInt32(p.ContainerPort)
		}
	}
	t.Fatalf("container %s has no port named %s", c.Name, name)
	return intstr.IntOrString{}
}

func checkProbe(t *testing.T, what string, p *corev1.Probe, path string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("no %s probe over HTTP", what)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromString("metrics") {
		t.Errorf("%s probe GET %s on port %v, want %s on metrics", what, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
	}
}
