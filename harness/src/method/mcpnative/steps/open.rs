//! The `open` step: the initialize handshake, version negotiation and what the server
//! declared, on any transport.

use super::common::*;
use super::runner::{Opened, Runner};
use crate::catalog::mcpnative::{McpExpect, OpenSpec};
use crate::method::mcpnative::conv::{short, Conv};
use crate::method::mcpnative::schema;
use crate::method::mcpnative::stop::Stop;
use crate::report::result::{Dir, NaCause};
use serde_json::{json, Value};

impl<'v> Runner<'v> {
    pub(super) fn open(
        &mut self,
        conv: &mut Conv<'_>,
        o: &OpenSpec,
        exps: &[&McpExpect],
    ) -> Result<Done, Stop> {
        let asked = o
            .version
            .clone()
            .unwrap_or_else(|| self.spec.protocol_version.clone());
        let counter = exps.iter().any(|e| e.counter_offer);
        if let Some(r) = self.reuse.take() {
            conv.log(
                Dir::Note,
                &format!(
                    "the session {} opened at {} goes on (shared session; its initialize is in that vector's transcript)",
                    r.by, r.version
                ),
            );
            self.opened_at(conv, &r.version, Some(r.caps), false);
            let mut done = self.gate(conv, short(&r.response.msg.to_string()))?;
            done.response = Some(r.response);
            return Ok(done);
        }
        if let Some(p) = &mut conv.peer {
            p.requested = asked.clone();
        }
        let mut session_version = asked.clone();
        let stateless_era = schema::is_stateless(&self.spec.protocol_version);
        if stateless_era {
            let id = self.send_request(
                conv,
                "server/discover",
                Some(json!({})),
                Some(asked.clone()),
                false,
            )?;
            let d = conv.answer_deadline();
            let a = conv.wait_response(&id, d)?;
            let obs = short(&a.msg.to_string());
            match (a.msg.get("result"), a.msg.get("error")) {
                (Some(r), _) => {
                    if counter {
                        return Err(Stop::fail(
                            format!("{UNSUPPORTED_VERSION}: server/discover at version {asked}, which no MCP version is, got a result; a server MUST answer an unsupported version with error -32022"),
                            "error -32022 with data.supported and data.requested",
                            obs,
                        )
                        .breaking(&[UNSUPPORTED_VERSION.to_owned()]));
                    }
                    let listed: Vec<String> = r
                        .get("supportedVersions")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    if !listed.contains(&asked) {
                        return Err(Stop::fail(
                            format!("{DISCOVER}: server/discover answered a request at {asked} but lists only {} in supportedVersions", crate::support::show::quoted_list(&listed)),
                            format!("supportedVersions listing {asked}"),
                            obs,
                        )
                        .breaking(&[DISCOVER.to_owned()])
                        .keyed("server/discover does not list the version it answers at"));
                    }
                    self.opened_at(conv, &asked, r.get("capabilities").cloned(), true);
                    return self.gate(conv, obs);
                }
                (None, Some(err)) => {
                    let code = err.get("code").and_then(Value::as_i64);
                    if code == Some(-32022) {
                        let supported: Vec<String> = err
                            .pointer("/data/supported")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect()
                            })
                            .unwrap_or_default();
                        if counter {
                            let requested = err.pointer("/data/requested").and_then(Value::as_str);
                            if supported.is_empty() || requested != Some(asked.as_str()) {
                                return Err(Stop::fail(
                                    format!("{UNSUPPORTED_VERSION}: error -32022 must carry data.supported (the versions it supports) and data.requested ({asked})"),
                                    "data.supported and data.requested",
                                    obs,
                                )
                                .breaking(&[UNSUPPORTED_VERSION.to_owned()]));
                            }
                            return Ok(Done {
                                response: Some(a),
                                observed: obs,
                                ..Done::default()
                            });
                        }
                        // The manifest's version is not the server's: take its newest.
                        let Some(v) = supported
                            .iter()
                            .filter(|v| schema::is_known(v))
                            .max()
                            .cloned()
                        else {
                            return Err(Stop::not_applicable(
                                NaCause::Untested,
                                format!(
                                    "the server supports only {}, none of which the harness knows",
                                    crate::support::show::quoted_list(&supported)
                                ),
                            ));
                        };
                        conv.log(
                            Dir::Note,
                            &format!(
                                "the server supports {}: continuing at {v}",
                                crate::support::show::quoted_list(&supported)
                            ),
                        );
                        if schema::is_stateless(&v) {
                            self.opened_at(conv, &v, None, true);
                            return self.gate(conv, obs);
                        }
                        session_version = v;
                    } else {
                        // No discovery: a server of the session era. Counter-offers come
                        // from its initialize.
                        conv.log(
                            Dir::Note,
                            &format!(
                                "server/discover refused (code {}): opening a session with initialize",
                                code.map_or("none".into(), |c| c.to_string())
                            ),
                        );
                        if !counter {
                            session_version = schema::NEWEST_SESSION.to_owned();
                        }
                    }
                }
                (None, None) => {
                    return Err(Stop::fail(
                        "the response has neither result nor error",
                        "a discovery result",
                        obs,
                    )
                    .keyed("server/discover answered with neither result nor error"))
                }
            }
        }
        if let Some(p) = &mut conv.peer {
            p.requested = session_version.clone();
        }
        let caps = self.client_caps();
        let id = self.send_request(
            conv,
            "initialize",
            Some(json!({
                "protocolVersion": session_version,
                "capabilities": caps,
                "clientInfo": Self::client_info(),
            })),
            None,
            false,
        )?;
        let d = conv.answer_deadline();
        let a = conv.wait_response(&id, d)?;
        let obs = short(&a.msg.to_string());
        let Some(r) = a.msg.get("result") else {
            let (rule, why) = if counter {
                (NEGOTIATION, format!("initialize at {session_version} was refused; a server that does not support the requested version MUST answer with another version it supports"))
            } else {
                (
                    INITIALIZE,
                    "initialize was answered with an error instead of an InitializeResult".into(),
                )
            };
            return Err(
                Stop::fail(format!("{rule}: {why}"), "an InitializeResult", obs)
                    .breaking(&[rule.to_owned()])
                    .keyed("initialize answered with an error"),
            );
        };
        let pv = r
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let negotiated = if pv == session_version {
            if counter && !schema::is_known(&pv) {
                return Err(Stop::fail(
                    format!("{NEGOTIATION}: the server accepted protocol version {pv}, which no MCP version is"),
                    "a counter-offer of a version the server supports",
                    obs,
                )
                .breaking(&[NEGOTIATION.to_owned()]));
            }
            pv.clone()
        } else {
            conv.log(
                Dir::Note,
                &format!("the server countered {session_version} with {pv}"),
            );
            if !schema::is_known(&pv) || schema::is_stateless(&pv) {
                if counter {
                    return Ok(Done {
                        response: Some(a),
                        observed: obs,
                        ..Done::default()
                    });
                }
                return Err(Stop::not_applicable(
                    NaCause::Untested,
                    format!("the server countered with protocol version {pv:?}, which the harness cannot speak; a client that does not support the server's version disconnects"),
                ));
            }
            pv.clone()
        };
        if counter && pv == session_version {
            return Err(Stop::fail(
                format!("{NEGOTIATION}: asked for {session_version}, the server answered with the same version"),
                "a counter-offer",
                obs,
            )
            .breaking(&[NEGOTIATION.to_owned()]));
        }
        let caps = r.get("capabilities").cloned();
        self.opened_at(conv, &negotiated, caps.clone(), false);
        if o.initialized && o.version.is_none() && exps.is_empty() {
            self.opened_with = Some(Opened {
                response: a.clone(),
                version: negotiated.clone(),
                caps: caps.unwrap_or_else(|| json!({})),
                by: self.vector.header.id.clone(),
            });
        }
        if o.initialized {
            conv.send_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .map_err(|e| Stop::fail(e.0.clone(), "the server reads its input", e.0))?;
            if let Some(p) = &mut conv.peer {
                p.initialized = true;
            }
        }
        let mut done = self.gate(conv, obs)?;
        done.response = Some(a);
        Ok(done)
    }

    /// The session is open at `version` with the server's capabilities.
    pub(super) fn opened_at(
        &mut self,
        conv: &mut Conv<'_>,
        version: &str,
        caps: Option<Value>,
        stateless: bool,
    ) {
        if let Some(p) = &mut conv.peer {
            p.version = Some(version.to_owned());
            p.server_caps = caps.unwrap_or_else(|| json!({}));
            if stateless {
                p.initialized = true;
            }
        }
        conv.protocol_header = Some(version.to_owned());
        self.vars
            .insert("PROTOCOL_VERSION".into(), Value::String(version.to_owned()));
        self.opened = true;
    }
}
