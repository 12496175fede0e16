// loopback.cjs — preloaded (node -r) into the MCP reference server so
// that it listens on 127.0.0.1 only: the server binds every interface,
// and a test has no business opening a port to the network.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
	const a = args[0];
	if (typeof a === "number" || (typeof a === "string" && /^\d+$/.test(a))) {
		// listen(port[, host][, backlog][, callback])
		if (typeof args[1] !== "string")
			args.splice(1, 0, "127.0.0.1");
		else
			args[1] = "127.0.0.1";
	} else if (a !== null && typeof a === "object" && a.path === undefined)
		args[0] = Object.assign({}, a, { host: "127.0.0.1" });
	return listen.apply(this, args);
};
