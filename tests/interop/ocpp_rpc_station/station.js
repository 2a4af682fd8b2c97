#!/usr/bin/env node
// A third-party OCPP 2.0.1 charging station on the npm package ocpp-rpc (pinned in package.json),
// for cms's end-to-end tests (tests/e2e/ocpp201.rs): an RPCClient offering `ocpp2.0.1` in strict
// mode, so every call and answer, both ways, is validated against the OCPP 2.0.1 schemas the
// package ships. It is the second, independent 2.0.1 peer beside the Python `ocpp` package's.
//
//     node station.js URL IDENTITY [--password P] [--id-token T] [--for SECONDS]
//
// URL is the whole ws://…/ocpp/IDENTITY. It boots, reports EVSE 1 connector 1 Available,
// authorizes the id token (ISO14443), runs a whole transaction on EVSE 1 (TransactionEvent
// Started, Updated x2, Ended with stoppedReason Local; the energy register 1000, 1300, 1600,
// 1900 Wh), then stays connected answering cms: RequestStartTransaction Accepted, then a
// TransactionEvent Started with its remoteStartId; RequestStopTransaction Accepted for that
// transaction, then its Ended; GetBaseReport NotSupported (it has no report to give); anything
// else NotImplemented. It leaves when its stdin closes or
// --for seconds (default 60) have passed.
//
// Stdout, one JSON object a line (flushed), as the Python peers print them:
//   {"connected": URL, "subprotocol": P, "at": T}
//   {"refused": HTTP_STATUS, "url": URL, "at": T}       the upgrade was refused (exit status 3)
//   {"sent": METHOD, "payload": {...}, "answer": {...}, "at": T}   a call of its own, answered
//   {"received": METHOD, "unique_id": ID, "payload": {...}, "at": T}  a call from cms
//   {"answered": METHOD, "unique_id": ID, "payload": {...} | "error": [CODE, MESSAGE], "at": T}
//   {"unexpected": WHAT, "at": T}                         also on stderr; exit status 1
//   {"ready": URL, "at": T}                               its own transaction is done
//   {"done": true, "at": T}
// Exit status 0 when nothing unexpected happened (a call error or an answer failing the schema,
// a call of cms failing it), 1 otherwise, 2 for bad arguments, 3 refused.
'use strict';

const { RPCClient, createRPCError } = require('ocpp-rpc');

const TIMES = ['2026-06-03T09:00:00Z', '2026-06-03T09:10:00Z', '2026-06-03T09:20:00Z',
    '2026-06-03T09:30:00Z'];
const ENERGY = [1000, 1300, 1600, 1900];
const CALL_TIMEOUT_MS = 10000;

const unexpected = [];

function emit(line) {
    line.at = new Date().toISOString();
    process.stdout.write(JSON.stringify(line) + '\n');
}

function recordUnexpected(what) {
    unexpected.push(what);
    emit({ unexpected: what });
    process.stderr.write(`UNEXPECTED ${what}\n`);
}

function parseArgs(argv) {
    const args = { password: null, idToken: '04A2B3C4D5E680', seconds: 60 };
    const rest = [];
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i];
        if (flag === '--password') args.password = argv[++i];
        else if (flag === '--id-token') args.idToken = argv[++i];
        else if (flag === '--for') args.seconds = Number(argv[++i]);
        else rest.push(flag);
    }
    if (rest.length !== 2 || !Number.isFinite(args.seconds)) {
        process.stderr.write(
            'usage: station.js URL IDENTITY [--password P] [--id-token T] [--for S]\n');
        process.exit(2);
    }
    [args.url, args.identity] = rest;
    const suffix = '/' + encodeURIComponent(args.identity);
    if (!args.url.endsWith(suffix)) {
        process.stderr.write(`URL must end with ${suffix}\n`);
        process.exit(2);
    }
    args.endpoint = args.url.slice(0, -suffix.length);
    return args;
}

function energy(wh, context, timestamp) {
    return [{
        timestamp,
        sampledValue: [{
            value: wh,
            measurand: 'Energy.Active.Import.Register',
            context,
            unitOfMeasure: { unit: 'Wh' },
        }],
    }];
}

async function send(client, method, payload) {
    try {
        const answer = await client.call(method, payload, { callTimeoutMs: CALL_TIMEOUT_MS });
        emit({ sent: method, payload, answer });
        return answer;
    } catch (error) {
        emit({ sent: method, payload, error: [error.rpcErrorCode || error.name, error.message] });
        recordUnexpected(`our ${method}: ${error.name}: ${error.message}`);
        return null;
    }
}

async function transaction(client, args) {
    const idToken = { idToken: args.idToken, type: 'ISO14443' };
    const transactionId = `NODE-${args.identity}`;
    const last = ENERGY.length - 1;
    for (let seqNo = 0; seqNo <= last; seqNo++) {
        const timestamp = TIMES[seqNo];
        const event = {
            eventType: seqNo === 0 ? 'Started' : seqNo === last ? 'Ended' : 'Updated',
            timestamp,
            triggerReason: seqNo === 0 ? 'Authorized' : seqNo === last ? 'StopAuthorized'
                : 'MeterValuePeriodic',
            seqNo,
            transactionInfo: { transactionId, chargingState: seqNo === last ? 'Idle' : 'Charging' },
            meterValue: energy(ENERGY[seqNo], seqNo === 0 ? 'Transaction.Begin'
                : seqNo === last ? 'Transaction.End' : 'Sample.Periodic', timestamp),
        };
        if (seqNo === 0) {
            event.idToken = idToken;
            event.evse = { id: 1, connectorId: 1 };
        }
        if (seqNo === last) {
            event.transactionInfo.stoppedReason = 'Local';
            event.idToken = idToken;
        }
        await send(client, 'TransactionEvent', event);
    }
}

// Answers cms's calls; a started remote transaction is sent once the answer has gone out.
function answerCalls(client) {
    const remote = new Map();
    const answer = (method, handler) => client.handle(method, async ({ messageId, params }) => {
        emit({ received: method, unique_id: messageId, payload: params });
        const [result, then] = handler(params);
        emit({ answered: method, unique_id: messageId, payload: result });
        if (then) setImmediate(() => then().catch((e) => recordUnexpected(`${method}: ${e}`)));
        return result;
    });
    answer('RequestStartTransaction', (params) => {
        const transactionId = `NODE-RS-${params.remoteStartId}`;
        const evse = { id: params.evseId || 1, connectorId: 1 };
        remote.set(transactionId, { evse, seqNo: 0, idToken: params.idToken });
        return [{ status: 'Accepted' }, () => {
            const timestamp = new Date().toISOString();
            return send(client, 'TransactionEvent', {
                eventType: 'Started',
                timestamp,
                triggerReason: 'RemoteStart',
                seqNo: remote.get(transactionId).seqNo++,
                transactionInfo: { transactionId, chargingState: 'Charging',
                    remoteStartId: params.remoteStartId },
                idToken: params.idToken,
                evse,
                meterValue: energy(5000, 'Transaction.Begin', timestamp),
            });
        }];
    });
    answer('RequestStopTransaction', (params) => {
        const running = remote.get(params.transactionId);
        if (!running) return [{ status: 'Rejected' }, null];
        remote.delete(params.transactionId);
        return [{ status: 'Accepted' }, () => {
            const timestamp = new Date().toISOString();
            return send(client, 'TransactionEvent', {
                eventType: 'Ended',
                timestamp,
                triggerReason: 'RemoteStop',
                seqNo: running.seqNo++,
                transactionInfo: { transactionId: params.transactionId, chargingState: 'Idle',
                    stoppedReason: 'Remote' },
                meterValue: energy(5600, 'Transaction.End', timestamp),
            });
        }];
    });
    // A station without a device model report to give: a valid answer all the same.
    answer('GetBaseReport', () => [{ status: 'NotSupported' }, null]);
    client.handle(({ method, messageId, params }) => {
        emit({ received: method, unique_id: messageId, payload: params });
        emit({ answered: method, unique_id: messageId, error: ['NotImplemented', method] });
        throw createRPCError('NotImplemented', `${method} is not implemented by this station`);
    });
}

function stdinClosedOr(seconds) {
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, seconds * 1000);
        process.stdin.on('end', () => { clearTimeout(timer); resolve(); });
        process.stdin.on('error', () => { clearTimeout(timer); resolve(); });
        process.stdin.resume();
    });
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const client = new RPCClient({
        endpoint: args.endpoint,
        identity: args.identity,
        password: args.password,
        protocols: ['ocpp2.0.1'],
        strictMode: true,
        reconnect: false,
        callTimeoutMs: CALL_TIMEOUT_MS,
    });
    client.on('strictValidationFailure', ({ method, outbound, isCall, error }) => {
        const what = `${outbound ? 'our' : "cms's"} ${isCall ? 'call' : 'answer'} ${method}`;
        recordUnexpected(`${what} fails the 2.0.1 schema: ${error.message}`);
    });
    answerCalls(client);
    try {
        await client.connect();
    } catch (error) {
        if (error.code) {
            emit({ refused: error.code, url: args.url });
            return 3;
        }
        recordUnexpected(`could not connect to ${args.url}: ${error.message}`);
        return 1;
    }
    emit({ connected: args.url, subprotocol: client.protocol });
    if (client.protocol !== 'ocpp2.0.1') recordUnexpected(`subprotocol ${client.protocol}`);
    await send(client, 'BootNotification', {
        reason: 'PowerUp',
        chargingStation: { model: 'RpcStation', vendorName: 'InteropVendor',
            firmwareVersion: 'ocpp-rpc-2.2.1' },
    });
    await send(client, 'StatusNotification', { timestamp: new Date().toISOString(),
        connectorStatus: 'Available', evseId: 1, connectorId: 1 });
    await send(client, 'Authorize', { idToken: { idToken: args.idToken, type: 'ISO14443' } });
    await transaction(client, args);
    emit({ ready: args.url });
    await stdinClosedOr(args.seconds);
    await client.close({ code: 1000, awaitPending: true });
    emit({ done: true });
    return unexpected.length ? 1 : 0;
}

main().then((code) => process.exit(code), (error) => {
    process.stderr.write(`${error.stack || error}\n`);
    process.exit(1);
});
