// Validate Karpenter objects (JSON list on stdin) with @kubernetes-models/karpenter, whose
// validators are generated from Karpenter's CRD schemas. Prints one line per object.
import { EC2NodeClass } from "@kubernetes-models/karpenter/karpenter.k8s.aws/v1/EC2NodeClass";
import { NodePool } from "@kubernetes-models/karpenter/karpenter.sh/v1/NodePool";

const models = { EC2NodeClass, NodePool };
let input = "";
for await (const chunk of process.stdin) input += chunk;
let failed = 0;
for (const obj of JSON.parse(input)) {
  try {
    new models[obj.kind](obj).validate();
    console.log(`ok ${obj.kind}/${obj.metadata.name}`);
  } catch (err) {
    failed += 1;
    console.log(`invalid ${obj.kind}/${obj.metadata.name}: ${err.message}`);
  }
}
process.exit(failed ? 1 : 0);
