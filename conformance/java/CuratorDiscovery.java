// Curator's ServiceDiscovery (curator-x-discovery 5.4) beside zk-recipes' on the same base
// path (conformance/tests/recipes_discovery_interop.rs). Usage: CuratorDiscovery CONNECT
// BASE; prints READY once connected, then answers each command on stdin (ERROR lines say
// what failed; end of input closes everything and exits):
//
//   register NAME ID ADDRESS PORT   registers a DYNAMIC instance with the URI spec
//                                   {scheme}://{address}:{port}; prints REGISTERED
//   instances NAME                  queryForInstances: INSTANCES id=uri;id=uri... (by id)
//   provide NAME                    a round-robin ServiceProvider's getInstance: PROVIDED id or -
//   cache NAME                      a ServiceCache whose listener prints CACHE <ids> on every
//                                   change; prints CACHE-STARTED <ids>
//
// Every line is flushed at once so the test can follow along.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.TreeMap;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

public final class CuratorDiscovery {
    static String describe(List<ServiceInstance<Object>> instances) {
        TreeMap<String, String> byId = new TreeMap<>();
        for (ServiceInstance<Object> i : instances) {
            byId.put(i.getId(), i.getUriSpec() == null ? "-" : i.buildUriSpec());
        }
        StringJoiner j = new StringJoiner(";");
        byId.forEach((id, uri) -> j.add(id + "=" + uri));
        return j.toString();
    }

    static String ids(List<ServiceInstance<Object>> instances) {
        TreeMap<String, String> byId = new TreeMap<>();
        for (ServiceInstance<Object> i : instances) {
            byId.put(i.getId(), "");
        }
        return String.join(",", byId.keySet());
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorPeers.connect(args[0]);
        ServiceDiscovery<Object> discovery = ServiceDiscoveryBuilder.builder(Object.class)
            .client(client).basePath(args[1]).build();
        discovery.start();
        List<AutoCloseable> open = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            try {
                switch (w[0]) {
                    case "register": {
                        ServiceInstance<Object> i = ServiceInstance.<Object>builder()
                            .name(w[1]).id(w[2]).address(w[3]).port(Integer.parseInt(w[4]))
                            .uriSpec(new UriSpec("{scheme}://{address}:{port}")).build();
                        discovery.registerService(i);
                        CuratorPeers.say("REGISTERED");
                        break;
                    }
                    case "instances":
                        CuratorPeers.say("INSTANCES " + describe(new ArrayList<>(discovery.queryForInstances(w[1]))));
                        break;
                    case "provide": {
                        ServiceProvider<Object> p = discovery.serviceProviderBuilder().serviceName(w[1]).build();
                        p.start();
                        ServiceInstance<Object> i = p.getInstance();
                        CuratorPeers.say("PROVIDED " + (i == null ? "-" : i.getId()));
                        p.close();
                        break;
                    }
                    case "cache": {
                        ServiceCache<Object> cache = discovery.serviceCacheBuilder().name(w[1]).build();
                        cache.addListener(new ServiceCacheListener() {
                            public void cacheChanged() {
                                CuratorPeers.say("CACHE " + ids(cache.getInstances()));
                            }

                            public void stateChanged(CuratorFramework c, ConnectionState s) {}
                        });
                        cache.start();
                        open.add(cache);
                        CuratorPeers.say("CACHE-STARTED " + ids(cache.getInstances()));
                        break;
                    }
                    default:
                        CuratorPeers.say("ERROR unknown command " + w[0]);
                }
            } catch (Exception e) {
                CuratorPeers.say("ERROR " + e);
            }
        }
        for (AutoCloseable c : open) {
            c.close();
        }
        discovery.close();
        client.close();
    }
}
