#pragma once
// Both ends of a pipeline in one process: serve() runs on its own thread for the passive
// endpoint, and stop() ends it (posting "stop" through the active endpoint) and reports its error.
#include <exception>
#include <thread>

#include "wirezip/pipeline/pipeline.hpp"

namespace wirezip::pipeline {

class ServeThread {
 public:
  ServeThread(rdma::Endpoint& sender, rdma::Endpoint& receiver);
  ServeThread(const ServeThread&) = delete;
  ServeThread& operator=(const ServeThread&) = delete;
  ~ServeThread();  // stops, swallowing the receiver's error: call stop() to see it
  void stop();     // stops and joins; rethrows what ended the receiver, if anything did

 private:
  rdma::Endpoint& sender_;
  std::exception_ptr error_;
  std::jthread thread_;  // last: joined before the members it writes go away
};

}  // namespace wirezip::pipeline
