// contract.shape: the contract declares exactly what the spec's parts 2 and 4.1 fix, whatever else it adds.
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type } from "@bufbuild/protobuf/wkt";
import { contractFiles } from "../../harness/contract/descriptor.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";

export const contractShape: CheckDefinition = {
  id: "contract.shape",
  title: "proto3 package example: exampleService.Hello(Message) returns (Message), unary; Message.body = 1, string",
  severity: "MUST",
  area: "contract",
  profile: "contract",
  spec: "§2, §4.1",
  async run(ctx) {
    const files = (await contractFiles(ctx)).filter((f) => f.package === "example");
    const problems: string[] = [];
    if (files.length === 0) problems.push("no file declares package example");
    for (const f of files) {
      if (f.syntax !== "proto3")
        problems.push(`${f.name} is not proto3 (syntax ${JSON.stringify(f.syntax || "proto2")})`);
    }
    const message = files.flatMap((f) => f.messageType).find((m) => m.name === "Message");
    if (!message) problems.push("no message Message");
    else {
      const body = message.field.find((fd) => fd.name === "body");
      if (!body) problems.push("Message has no field body");
      else {
        if (body.number !== 1) problems.push(`Message.body is field ${body.number}, not 1`);
        if (body.type !== FieldDescriptorProto_Type.STRING) problems.push("Message.body is not a string");
        if (body.label === FieldDescriptorProto_Label.REPEATED) problems.push("Message.body is repeated");
      }
    }
    const service = files.flatMap((f) => f.service).find((s) => s.name === "exampleService");
    if (!service) problems.push("no service exampleService");
    else {
      const hello = service.method.find((m) => m.name === "Hello");
      if (!hello) problems.push("exampleService has no method Hello");
      else {
        if (hello.inputType !== ".example.Message")
          problems.push(`Hello takes ${hello.inputType}, not example.Message`);
        if (hello.outputType !== ".example.Message")
          problems.push(`Hello returns ${hello.outputType}, not example.Message`);
        if (hello.clientStreaming) problems.push("Hello streams requests; the spec declares one request");
        if (hello.serverStreaming) problems.push("Hello streams responses; the spec declares one response");
      }
    }
    if (problems.length > 0) return fail(problems.join("; "));
    return pass("exampleService.Hello(example.Message) returns (example.Message), unary; body = 1 string");
  },
};
