// Package deploy holds no code: its tests check the deployment files next to
// it, the parts of `make deploy-check` that need neither Docker nor a
// cluster.
//
//   - docker/compose.yaml parses; every dependency names a service, services
//     waited on as healthy have a healthcheck, the NATS routes name the three
//     NATS services, and the workers' stop grace exceeds their drain grace.
//   - kubernetes/: kustomization.yaml lists every manifest; the worker's
//     terminationGracePeriodSeconds exceeds its drain grace; the KEDA trigger
//     names the TASKS stream and the durable consumer the queue package
//     creates for the served queue ("queue-<name>"), with lagThreshold equal
//     to the sessions per worker.
//   - grafana/agentfleet.json parses as a dashboard whose panels all query
//     the templated Prometheus datasource.
//   - Every agentfleet_* metric the dashboard and prometheus/alerts.yaml
//     query is exported by package fleet, or listed as assumed (not yet
//     exported) in metrics_test.go; every alert's runbook link names a
//     heading of docs/operations.md.
//
// Schema validation of the manifests (kubeconform) and of the alert rules
// (promtool) runs from deploy/check.sh.
package deploy
