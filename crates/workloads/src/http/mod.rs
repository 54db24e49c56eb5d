//! HTTP load: the client engine (closed loop, open loop, connection rate) and the target
//! server.
