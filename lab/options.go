package lab

// AllHosts is the key of a per-host setting (Cooling, CPU, Latency) for
// every host not named.
const AllHosts = "*"
