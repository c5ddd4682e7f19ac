/**
 * The grant that lets the functions' identity ask the apiserver for TokenReviews and
 * SubjectAccessReviews (kubernetes auth mode), as one RBAC YAML document: what `npm start`, the
 * auth bench and the review tests apply to the embedded cluster, as
 * `knative/components/kubernetes-auth` does on a real one.
 * @module
 */

/** A ClusterRoleBinding of `system:auth-delegator` to the ServiceAccount `<namespace>/<serviceAccount>`. */
export function reviewerGrantYaml(serviceAccount = 'felis-world', namespace = 'minecraft'): string {
  return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${serviceAccount}-auth-delegator }
subjects: [{ kind: ServiceAccount, name: ${serviceAccount}, namespace: ${namespace} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator }
`;
}
