// Curator 5.4's service-instance JSON, for zk-recipes' discovery tests:
//   write          prints the bytes JsonInstanceSerializer(Object.class) writes for a fixed
//                  set of instances, one per line
//   read FILE      reads instance JSON from FILE (one per line) and prints, per line, the
//                  fields Curator read and the URI it renders, or "error <class>"
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

public class CuratorDiscoveryJson {
    public static void main(String[] args) throws Exception {
        JsonInstanceSerializer<Object> json = new JsonInstanceSerializer<>(Object.class);
        if (args[0].equals("write")) {
            Map<String, String> payload = new HashMap<>();
            payload.put("zone", "eu\u001f/\u00e9");
            ServiceInstance<Object> a = ServiceInstance.<Object>builder()
                .name("api").id("7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b")
                .address("10.0.0.5").port(8080).registrationTimeUTC(1700000000000L)
                .uriSpec(new UriSpec("{scheme}://{address}:{port}")).build();
            ServiceInstance<Object> b = ServiceInstance.<Object>builder()
                .name("billing").id("b-1").address("10.0.0.6").sslPort(8443)
                .registrationTimeUTC(5L).serviceType(ServiceType.STATIC).payload(payload)
                .uriSpec(new UriSpec("{scheme}://{address}:{ssl-port}/x{[}{]}")).build();
            ServiceInstance<Object> c = ServiceInstance.<Object>builder()
                .name("quote\"d").id("c").address(null).registrationTimeUTC(0L)
                .payload("text payload").uriSpec(null).build();
            for (ServiceInstance<Object> i : new ServiceInstance[] {a, b, c}) {
                System.out.println(new String(json.serialize(i), StandardCharsets.UTF_8));
            }
        } else {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get(args[1]), StandardCharsets.UTF_8)) {
                try {
                    ServiceInstance<Object> i = json.deserialize(line.getBytes(StandardCharsets.UTF_8));
                    String uri = i.getUriSpec() == null ? "-" : i.buildUriSpec();
                    Object p = i.getPayload();
                    System.out.println(i.getName() + "|" + i.getId() + "|" + i.getAddress() + "|"
                        + i.getPort() + "|" + i.getSslPort() + "|" + i.getRegistrationTimeUTC() + "|"
                        + i.getServiceType() + "|" + i.isEnabled() + "|"
                        + (p == null ? "null" : p.getClass().getName() + ":" + p) + "|" + uri);
                } catch (Exception e) {
                    System.out.println("error " + e.getClass().getSimpleName());
                }
            }
        }
    }
}
