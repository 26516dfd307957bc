# SPDX-License-Identifier: Apache-2.0
"""tests/ros2_sub11.py — a subscriber of Cyclone DDS's newer Python binding (11.x, PyPI
cyclonedds), the kind of peer that crashes Debian's Cyclone DDS 0.10.2 through its type
objects. tests/test_ros2.sh runs it beside the app:

    ros2_sub11.py DOMAIN TOPIC SECONDS [COUNT]   prints "received N" (sensor_msgs/Image
                                                samples) after SECONDS, or once it has COUNT
"""
import sys
import time
from dataclasses import dataclass

import cyclonedds.idl.types as t
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic


@final
@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: t.int32
    nanosec: t.uint32


@final
@dataclass
class Header_(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time_
    frame_id: str


@final
@dataclass
class Image_(IdlStruct, typename="sensor_msgs::msg::dds_::Image_"):
    header: Header_
    height: t.uint32
    width: t.uint32
    encoding: str
    is_bigendian: t.uint8
    step: t.uint32
    data: t.sequence[t.uint8]


def main():
    dp = DomainParticipant(int(sys.argv[1]))
    reader = DataReader(dp, Topic(dp, sys.argv[2], Image_))
    count = int(sys.argv[4]) if len(sys.argv) > 4 else None
    n, t0 = 0, time.time()
    while time.time() - t0 < float(sys.argv[3]) and (count is None or n < count):
        n += len(reader.take(10))
        time.sleep(0.01)
    print("received", n)


if __name__ == "__main__":
    main()
