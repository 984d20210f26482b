package tokens

import (
	"bytes"
	"fmt"
)

// writeK8sItem writes one pretty-printed Pod, deterministic in i, the way
// `kubectl get pods -o json` lays it out.
func writeK8sItem(buf *bytes.Buffer, i int) {
	h := uint64(i)*0x9E3779B97F4A7C15 + 1
	fmt.Fprintf(buf, `        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": "2024-05-%02dT%02d:%02d:%02dZ",
                "generateName": "web-%d-",
                "labels": {
                    "app": "web",
                    "pod-template-hash": "%x"
                },
                "name": "web-%d-%x",
                "namespace": "prod",
                "resourceVersion": "%d",
                "uid": "%016x-%04x"
            },
            "spec": {
                "containers": [
                    {
                        "image": "nginx:1.25.%d",
                        "imagePullPolicy": "IfNotPresent",
                        "name": "nginx",
                        "ports": [
                            {
                                "containerPort": 8080,
                                "protocol": "TCP"
                            }
                        ],
                        "resources": {
                            "limits": {
                                "cpu": "500m",
                                "memory": "256Mi"
                            }
                        }
                    }
                ],
                "nodeName": "ip-10-0-%d-%d.ec2.internal"
            },
            "status": {
                "phase": "%s",
                "podIP": "10.244.%d.%d",
                "startTime": "2024-05-%02dT%02d:%02d:%02dZ"
            }
        }`, 1+i%28, i%24, i%60, (i*7)%60, i%97, h%0xfffff, i, h>>40, 100000+i*13, h, i%65536, i%10,
		i%255, (i*7)%255, []string{"Running", "Pending", "Succeeded"}[i%3], (i/255)%255, i%255,
		1+i%28, (i+1)%24, (i*3)%60, (i*11)%60)
}
