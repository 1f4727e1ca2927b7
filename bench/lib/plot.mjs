export function plotLatency() { return Buffer.alloc(0); }
export function plotThroughput() { return Buffer.alloc(0); }
