#!/usr/bin/env node
// A minimal OCPP 1.6J central system on ocpp-rpc, written as the package's README shows: an
// RPCServer in strict mode (calls and answers validated against the OCPP 1.6 schemas) and one
// handler per action. It is one of the peers that loadtest/compare measures cms beside; it keeps
// nothing, and unlike the README's example it does not log every frame.
//
//     node central.js --port 9000     # ws://127.0.0.1:9000/ocpp/{identity}, ocpp1.6
'use strict';

const { RPCServer, createRPCError } = require('ocpp-rpc');

function parsePort(argv) {
    const at = argv.indexOf('--port');
    const port = at >= 0 ? Number(argv[at + 1]) : 9000;
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error('usage: central.js [--port PORT]');
        process.exit(2);
    }
    return port;
}

// One counter for the whole central system, as transaction ids must be unique across chargers.
let lastTransactionId = 0;

const server = new RPCServer({
    protocols: ['ocpp1.6'],
    strictMode: true,
});

server.auth((accept, reject, handshake) => {
    accept({ identity: handshake.identity });
});

server.on('client', (client) => {
    client.handle('BootNotification', () => ({
        status: 'Accepted',
        interval: 300,
        currentTime: new Date().toISOString(),
    }));
    client.handle('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    client.handle('StatusNotification', () => ({}));
    client.handle('MeterValues', () => ({}));
    client.handle('StartTransaction', () => ({
        transactionId: ++lastTransactionId,
        idTagInfo: { status: 'Accepted' },
    }));
    client.handle('StopTransaction', () => ({ idTagInfo: { status: 'Accepted' } }));
    client.handle(({ method }) => {
        throw createRPCError('NotImplemented', `${method} is not implemented`);
    });
});

server.on('error', (err) => console.error('server error:', err));

async function main() {
    const port = parsePort(process.argv);
    await server.listen(port, '127.0.0.1');
    console.log(`central system: listening on ws://127.0.0.1:${port}/`);
    const stop = () => server.close({ code: 1001 }).finally(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
